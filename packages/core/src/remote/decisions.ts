import { isTerminal, type ToolCallRecord } from '../record/record.ts';
import { inputHash } from '../record/input-hash.ts';
import { messageOf } from '../record/text.ts';
import type { CallAction, CallRequest, RequestError, Resolution } from '../gate/call-request.ts';
import { networkError, serverError } from './server-error.ts';

/**
 * A remote gate's decisions: Approve, Deny and Cancel as requests to the server gate, and the
 * request about each call that is on its way or was refused. A request ends when the call's move
 * arrives on the feed (`moved`), when the server answers no, or when it is refused here because the
 * feed is not live (`offline`, and the feed is asked to reopen at once).
 *
 * @example
 * const decisions = createDecisions({ base: '/api/toolgate', fetch, headers, get, live, retryNow, publish });
 * decisions.approve('call_1');
 */
export interface Decisions {
  /** Sends the SHA-256 of the input the record shows (and the person's edit, if any); `false` when the call does not await approval or a request is on its way. */
  readonly approve: (id: string, edit?: { readonly input: unknown }) => boolean;
  readonly deny: (id: string, reason?: string) => boolean;
  readonly cancel: (id: string, reason?: string) => boolean;
  /** Sends a person's word on a call held in doubt; `false` when the call is not held or a request is on its way. */
  readonly resolve: (id: string, resolution: Resolution) => boolean;
  /** Asks the server to undo a committed call; `false` when it is not committed, was compensated, or a request is on its way. */
  readonly compensate: (id: string, reason?: string) => boolean;
  readonly requestOf: (id: string) => CallRequest | undefined;
  /** The call's status changed on the feed: whatever was asked about it is answered. */
  readonly moved: (id: string) => void;
  /** Aborts every request on its way; later answers change nothing, and nothing more is sent. */
  readonly close: () => void;
}

/**
 * What a remote gate's decisions need.
 *
 * @example
 * const init: DecisionsInit = { base, fetch, headers, get: (id) => records.get(id), live: () => true, retryNow: () => {}, publish: () => {} };
 */
export interface DecisionsInit {
  /** Where the server mounted `toolgateHandler`, without a trailing slash. */
  readonly base: string;
  readonly fetch: typeof globalThis.fetch;
  readonly headers: () => HeadersInit | Promise<HeadersInit>;
  /** The mirrored record of a call. */
  readonly get: (id: string) => ToolCallRecord | undefined;
  /** Whether the feed is live: a decision that could not be followed is not sent. */
  readonly live: () => boolean;
  /** Opens a broken feed now: the server may be gone, or back. */
  readonly retryNow: () => void;
  /** Tells the call's subscribers that its request changed. */
  readonly publish: (id: string) => void;
}

/**
 * The refusal of a decision made while the feed is not live: it could not be followed, so it is
 * not sent, and the person sees why.
 *
 * @example
 * if (request.error.code === OFFLINE.code) showRetryHint();
 */
export const OFFLINE: RequestError = {
  code: 'offline',
  message:
    'the server cannot be reached right now, so the decision was not sent; try again once the connection is back',
};

const awaiting = (call: ToolCallRecord) => call.status === 'awaiting_approval';
const open = (call: ToolCallRecord) => !isTerminal(call.status);
const held = (call: ToolCallRecord) => call.status === 'executing' && call.doubt !== undefined;
const undoable = (call: ToolCallRecord) =>
  call.status === 'committed' && call.compensation === undefined && call.compensates === undefined;

/**
 * Creates a remote gate's decisions, with no request on its way.
 *
 * @example
 * const decisions = createDecisions({ base, fetch: globalThis.fetch, headers: () => ({}), get, live, retryNow, publish });
 */
export function createDecisions(init: DecisionsInit): Decisions {
  const { base, headers, get, retryNow } = init;
  const requests = new Map<string, CallRequest>();
  const inFlight = new AbortController();

  function setRequest(id: string, request: CallRequest | undefined): void {
    if (request === undefined) requests.delete(id);
    else requests.set(id, request);
    init.publish(id);
  }

  function sendable(id: string, allowed: (call: ToolCallRecord) => boolean): ToolCallRecord | undefined {
    const call = get(id);
    if (
      inFlight.signal.aborted ||
      call === undefined ||
      !allowed(call) ||
      requests.get(id)?.state === 'sending'
    )
      return undefined;
    return call;
  }

  /** Sends one request about a call; the answer, or the call's move, ends it. */
  function send(id: string, action: CallAction, body: () => Promise<object> | object): true {
    // A decision sent while the feed is down could not be followed: it is refused where the person sees it.
    if (!init.live()) {
      setRequest(id, { action, state: 'refused', error: OFFLINE });
      retryNow();
      return true;
    }
    const request: CallRequest = { action, state: 'sending' };
    const sentAt = get(id);
    setRequest(id, request);
    const mine = () => !inFlight.signal.aborted && requests.get(id) === request;
    void post(id, action, body).then((answer) => {
      if (!mine()) return;
      if (answer.error !== undefined) setRequest(id, { action, state: 'refused', error: answer.error });
      // Accepted: the call's move ends the request. When it came first, the request is over now; and
      // an approval that others must follow moves nothing, so its answer ends it.
      else if (answer.waitsForOthers || get(id) !== sentAt) setRequest(id, undefined);
    });
    return true;
  }

  async function post(
    id: string,
    action: CallAction,
    body: () => Promise<object> | object,
  ): Promise<{ error?: RequestError; waitsForOthers?: boolean }> {
    let payload: string;
    let sendHeaders: Headers;
    try {
      payload = JSON.stringify(await body());
      sendHeaders = new Headers(await headers());
    } catch (error) {
      return { error: { code: 'not_sent', message: `the request could not be made: ${messageOf(error)}` } };
    }
    sendHeaders.set('Content-Type', 'application/json');
    let response: Response;
    try {
      response = await init.fetch(`${base}/calls/${encodeURIComponent(id)}/${action}`, {
        method: 'POST',
        headers: sendHeaders,
        body: payload,
        signal: inFlight.signal,
      });
    } catch (error) {
      // The server may be gone: find out now rather than after the feed's backoff.
      if (!inFlight.signal.aborted) retryNow();
      return { error: networkError(error) };
    }
    if (!response.ok) return { error: await serverError(response) };
    const answer: unknown = await response.json().catch(() => undefined);
    const left =
      typeof answer === 'object' && answer !== null ? (answer as { left?: unknown }).left : undefined;
    return { waitsForOthers: typeof left === 'number' && left > 0 };
  }

  return {
    approve(id, edit) {
      const call = sendable(id, awaiting);
      if (call === undefined) return false;
      const shown = call.input;
      // The hash is of what the person was shown; the edit is what they want to run instead.
      const edited =
        typeof edit === 'object' && edit !== null && Object.hasOwn(edit, 'input')
          ? { input: edit.input }
          : {};
      return send(id, 'approve', async () => ({ inputHash: await inputHash(shown), ...edited }));
    },
    deny(id, reason) {
      if (sendable(id, awaiting) === undefined) return false;
      return send(id, 'deny', () => (reason === undefined ? {} : { reason }));
    },
    cancel(id, reason) {
      if (sendable(id, open) === undefined) return false;
      return send(id, 'cancel', () => (reason === undefined ? {} : { reason }));
    },
    resolve(id, resolution) {
      if (sendable(id, held) === undefined) return false;
      const { outcome } = resolution;
      if (outcome !== 'committed' && outcome !== 'not_executed') return false;
      return send(id, 'resolve', () => ({
        outcome,
        ...(outcome === 'committed' && Object.hasOwn(resolution, 'output')
          ? { output: resolution.output }
          : {}),
        ...(typeof resolution.note === 'string' && resolution.note !== '' ? { note: resolution.note } : {}),
      }));
    },
    compensate(id, reason) {
      if (sendable(id, undoable) === undefined) return false;
      return send(id, 'compensate', () => (reason === undefined ? {} : { reason }));
    },
    requestOf: (id) => requests.get(id),
    moved: (id) => void requests.delete(id),
    close: () => inFlight.abort(),
  };
}
