import { createStore, type StoreApi } from 'zustand/vanilla';
import { createAuditLog, type AuditEvent } from './gate/audit.ts';
import { createCallStore } from './gate/call-store.ts';
import { createDelivery } from './gate/listeners.ts';
import type { CallAction, CallRequest, RequestError } from './gate/call-request.ts';
import { stoppedCall } from './gate/stopped.ts';
import { systemClock, type Clock } from './call/clock.ts';
import { openEventFeed, type ConnectionState, type Retry } from './remote/event-feed.ts';
import type { ReadonlyStore, ToolGate } from './gate/gate.ts';
import { inputHash } from './call/input-hash.ts';
import { DEFAULT_LIMITS } from './proposal/limits.ts';
import { messageOf } from './call/pipeline.ts';
import { partialStateProblem } from './call/partial-state.ts';
import { readProposal } from './proposal/proposal.ts';
import { isTerminal, type ProposalSource, type Reason, type RejectedCall, type SettledCall, type ToolCallRecord, type ToolCallStatus } from './call/record.ts';
import { createRemoteTools } from './remote/remote-tools.ts';
import { networkError, serverError } from './remote/server-error.ts';
import type { ToolDefinition } from './tool/tool.ts';
import { toolResult } from './reply/tool-result.ts';
import { readMove, readSnapshot, type FeedMove, type FeedSnapshot, type WireReading } from './remote/wire.ts';

export type { CallAction, CallRequest, RequestError } from './gate/call-request.ts';
export type { ConnectionState, Retry } from './remote/event-feed.ts';
export type { FeedMove, FeedSnapshot, LedgerEvent } from './remote/wire.ts';

/**
 * What {@link createRemoteGate} takes.
 *
 * @example
 * const options: RemoteGateOptions<Shop> = { url: '/api/toolgate', session: chatId, tools: [charge], store: shopStore };
 */
export interface RemoteGateOptions<S> {
  /** Where the server mounted `toolgateHandler` (its `basePath`), e.g. `/api/toolgate` or a full URL. */
  readonly url: string;
  /** The session (conversation) whose calls this page shows. */
  readonly session: string;
  /**
   * The same tool definitions the server uses. The remote gate runs none of them: it only calls a
   * tool's `commit` to bring a committed call's output into `store`.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly tools: readonly ToolDefinition<any, any, NoInfer<S>>[];
  /** The app's Zustand store; written only when a `committed` move arrives live, once per call. */
  readonly store?: StoreApi<S>;
  /** The `fetch` to use (default: the global one), e.g. to send cookies across origins. */
  readonly fetch?: typeof globalThis.fetch;
  /** Headers for every request, e.g. `Authorization`; a function is asked again for each request. */
  readonly headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  readonly clock?: Clock;
  /** How long to wait before opening the feed again after it broke (default: 0.5 s doubling up to 30 s, jittered). */
  readonly retry?: Retry;
  /** Reopen the feed when nothing arrived (not even a heartbeat) for this long (default 60 s; `Infinity` never). */
  readonly idleTimeoutMs?: number;
  /** The longest feed message buffered, in characters (default 16 Mi); a longer one breaks the connection. */
  readonly maxMessageChars?: number;
  /** Keep at most this many audit events (default: all). */
  readonly audit?: { readonly limit?: number };
  /**
   * Receives what the page cannot act on: feed messages that are not well formed (they are
   * dropped), a commit that threw, a feed that stopped for good (default: `console.error`).
   */
  readonly onError?: (error: unknown) => void;
}

/**
 * Where a remote gate's event feed is, and why it is not live when it is not.
 *
 * @example
 * gate.connection.subscribe(({ state, error }) => banner(state === 'live' ? '' : `Offline: ${error?.message ?? state}`));
 */
export interface RemoteConnection {
  readonly state: ConnectionState;
  /** Why the feed is reconnecting or stopped; `undefined` while it is connecting or live, and after `close()`. */
  readonly error: RequestError | undefined;
  /** When the next attempt starts (the clock's time), while reconnecting. */
  readonly retryAt: number | undefined;
}

/**
 * A page's mirror of a server gate: the same {@link ToolGate} shape, so `@toolgate/react` works
 * unchanged, fed by the server's event feed. Approve, Deny and Cancel become requests to the
 * server; `requestOf(id)` tells whether one is on its way or was refused.
 *
 * @example
 * const gate: RemoteGate = createRemoteGate({ url: '/api/toolgate', session: chatId, tools, store });
 * gate.connection.subscribe(({ state }) => console.log('feed', state));
 */
export interface RemoteGate extends ToolGate {
  readonly requestOf: (id: string) => CallRequest | undefined;
  /** The event feed's state, as a read-only Zustand store. */
  readonly connection: ReadonlyStore<RemoteConnection>;
  /** Stops the feed and any request on its way. Calls waiting in `settled` are rejected. */
  readonly close: () => void;
}

// Calls are proposed where the model runs; a page asked to propose one says so.
/** Events that move no status but carry a changed record: one approval of several, a person's edit. */
const RECORD_NOTES: ReadonlySet<string> = new Set(['approved', 'edited']);

const NOT_HERE =
  'this page mirrors a server gate and proposes no calls: the server proposes them (serverGate.propose), and the page shows each one once the server\'s event feed has it';

/**
 * Mirrors a server gate in the browser. It opens the server's event feed
 * (`GET {url}/sessions/{session}/events`, with `fetch`, so that `headers` can carry an
 * `Authorization` header), keeps `calls` in the same shape as a local gate's, and reopens the feed
 * after a backoff with `Last-Event-ID` when it breaks. `approve(id)` posts the SHA-256 of the
 * input the record shows (the server runs the call only for that input); `deny` and `cancel` post
 * too. Each returns `true` when a request was sent and `false` when the call is not in a status
 * that allows it or a request about it is already on its way.
 *
 * The app's store is written only when a `committed` move arrives live: once per call, through the
 * tool's own `commit`, in one `setState`. Calls already settled in the first snapshot are not
 * committed again (the page loaded that state from the app's own API), nor are moves the server
 * sends again after a reconnect.
 *
 * A remote gate proposes nothing: `propose`, `run` and `stream.open` answer the mirrored record for
 * an id the feed has delivered, and otherwise a `rejected` record (code `unauthorized`) that says
 * calls are proposed on the server. It is not stored, so `useToolCall(part)` shows the call as soon
 * as the server's record arrives.
 *
 * @example
 * import { createRemoteGate } from '@toolgate/core/remote';
 *
 * const gate = createRemoteGate({
 *   url: '/api/toolgate',
 *   session: chatId,
 *   tools: [addToCart],
 *   store: cart,
 *   headers: () => ({ Authorization: `Bearer ${auth.token()}` }),
 * });
 * // <ToolGateProvider gate={gate}> … </ToolGateProvider>; gate.close() when the chat goes away.
 */
export function createRemoteGate<S = unknown>(options: RemoteGateOptions<S>): RemoteGate {
  if (typeof options.url !== 'string' || options.url === '') throw new Error('createRemoteGate: `url` must be where the server mounted toolgateHandler, e.g. "/api/toolgate".');
  if (typeof options.session !== 'string' || options.session === '') throw new Error('createRemoteGate: `session` must be the id of the session (conversation) to show.');
  const { store, session } = options;
  const tools = createRemoteTools(options.tools, store !== undefined);
  const base = options.url.replace(/\/+$/, '');
  const clock = options.clock ?? systemClock;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const fetchFn = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const given = options.headers;
  const headers = typeof given === 'function' ? given : () => given ?? {};
  const audit = createAuditLog(options.audit?.limit ?? Infinity, onError);

  const records = new Map<string, ToolCallRecord>();
  const mirror = createCallStore(records, createDelivery(), onError);
  const requests = new Map<string, CallRequest>();
  const waiters = new Map<string, { resolve: (call: SettledCall) => void; reject: (error: Error) => void }[]>();
  const connection = createStore<RemoteConnection>()(() => ({ state: 'connecting', error: undefined, retryAt: undefined }));
  // Ids whose `committed` has reached the store, or never may: a call is committed into it at most once.
  const committed = new Set<string>();
  // The last ledger event applied; `undefined` until the first snapshot.
  let seq: number | undefined;
  let closed = false;
  let localIds = 0;
  const requestsInFlight = new AbortController();

  const publish = (changed: string[]): void => mirror.publish(changed);

  /** Puts a record in the mirror; the caller publishes. Settles waiters and ends requests the move answered. */
  function put(record: ToolCallRecord): void {
    const before = records.get(record.id);
    records.set(record.id, record);
    if (before !== undefined && before.status !== record.status) requests.delete(record.id);
    if (!isTerminal(record.status)) return;
    tools.release(record.id);
    const waiting = waiters.get(record.id);
    waiters.delete(record.id);
    for (const { resolve } of waiting ?? []) resolve(record as SettledCall);
  }

  /** Brings a committed call's output into the app's store through its tool's `commit`, once. */
  function commitToStore(record: ToolCallRecord): void {
    if (committed.has(record.id)) return;
    committed.add(record.id);
    const tool = tools.definition(record.name, record.id);
    if (tool?.commit === undefined || store === undefined) return;
    const refused = (why: string, cause?: unknown) =>
      onError(
        new Error(
          `toolgate remote: call "${record.id}" (${record.name}) committed on the server, but ${why}; the record stays committed as the server says, and the app's store was not changed.`,
          cause === undefined ? undefined : { cause },
        ),
      );
    let partial: unknown;
    try {
      partial = tool.commit(store.getState(), record.output, record.input);
    } catch (error) {
      refused(`its commit threw here: ${messageOf(error)}`, error);
      return;
    }
    const problem = partialStateProblem(partial);
    if (problem !== undefined) {
      refused(`its ${problem}`);
      return;
    }
    try {
      store.setState(partial as Partial<S>);
    } catch (error) {
      // The state changed before a subscriber threw: the commit happened, the listener is the app's bug.
      onError(error);
    }
  }

  function applySnapshot(snapshot: FeedSnapshot): void {
    // An older snapshot than what the page has would move calls back.
    if (seq !== undefined && snapshot.seq < seq) return;
    const first = seq === undefined;
    seq = snapshot.seq;
    const changed = first ? [] : [...records.keys()];
    if (!first) records.clear();
    for (const record of snapshot.calls) {
      // The page loaded what committed before it opened the feed; after that, a fresh snapshot
      // (a server that could not resume) still carries calls that committed while it was away.
      if (record.status === 'committed' && first) committed.add(record.id);
      else if (record.status === 'committed') commitToStore(record);
      put(record);
      if (!changed.includes(record.id)) changed.push(record.id);
    }
    publish(changed);
  }

  function applyMove({ event, record }: FeedMove): void {
    if (seq !== undefined && event.seq <= seq) return; // sent again after a reconnect
    if (event.session !== session) {
      onError(new Error(`toolgate remote: dropped event ${event.seq}: it is about session "${event.session}", not "${session}".`));
      return;
    }
    const current = records.get(record.id);
    const refusal = event.from === event.to && event.reason !== undefined;
    if (!refusal && current !== undefined && isTerminal(current.status) && current.status !== record.status) {
      onError(new Error(`toolgate remote: dropped event ${event.seq}: call "${record.id}" is ${current.status}, and a settled call never moves again.`));
      return;
    }
    seq = event.seq;
    audit.record(auditEventOf(event, record.name));
    // A refusal leaves the call as it was; an approval of several, or an edit, changes the record only.
    if (refusal && current !== undefined && !RECORD_NOTES.has(event.reason?.code ?? '')) return;
    if (record.status === 'committed') commitToStore(record);
    put(record);
    publish([record.id]);
  }

  function receive(name: string | undefined, id: string | undefined, data: string): void {
    if (name !== 'snapshot' && name !== 'move') return; // other kinds of message are for other readers
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      drop(`its ${name} data is not JSON`, id);
      return;
    }
    const reading: WireReading<FeedSnapshot | FeedMove> = name === 'snapshot' ? readSnapshot(parsed) : readMove(parsed);
    if (!reading.ok) {
      drop(reading.problem, id);
      return;
    }
    for (const problem of reading.problems) drop(problem, id);
    const messageSeq = 'seq' in reading.value ? reading.value.seq : reading.value.event.seq;
    if (id !== undefined && id !== '' && id !== String(messageSeq)) {
      drop(`its id ${JSON.stringify(id)} is not its sequence number ${messageSeq}`, id);
      return;
    }
    if ('seq' in reading.value) applySnapshot(reading.value);
    else applyMove(reading.value);
  }

  const drop = (problem: string, id: string | undefined) =>
    onError(new Error(`toolgate remote: dropped a feed message${id ? ` (id ${id})` : ''}: ${problem}.`));

  const feed = openEventFeed({
    url: `${base}/sessions/${encodeURIComponent(session)}/events`,
    fetch: fetchFn,
    headers,
    clock,
    retry: options.retry ?? {},
    idleTimeoutMs: options.idleTimeoutMs ?? 60_000,
    maxMessageChars: options.maxMessageChars ?? 16 * 1024 * 1024,
    resumeAfter: () => seq,
    onMessage: (message) => receive(message.event, message.id, message.data),
    onState: (state, error, retryAt) => connection.setState({ state, error, retryAt }, true),
    onError,
  });

  function setRequest(id: string, request: CallRequest | undefined): void {
    if (request === undefined) requests.delete(id);
    else requests.set(id, request);
    mirror.publish([id]);
  }

  /** Sends one request about a call; the answer, or the call's move, ends it. */
  function send(id: string, action: CallAction, body: () => Promise<object> | object): true {
    const request: CallRequest = { action, state: 'sending' };
    const sentAt = records.get(id)?.status;
    setRequest(id, request);
    const mine = () => !closed && requests.get(id) === request;
    const refuse = (error: RequestError) => {
      if (mine()) setRequest(id, { action, state: 'refused', error });
    };
    void (async () => {
      let payload: string;
      let sendHeaders: Headers;
      try {
        payload = JSON.stringify(await body());
        sendHeaders = new Headers(await headers());
      } catch (error) {
        refuse({ code: 'not_sent', message: `the request could not be made: ${messageOf(error)}` });
        return;
      }
      sendHeaders.set('Content-Type', 'application/json');
      let response: Response;
      try {
        response = await fetchFn(`${base}/calls/${encodeURIComponent(id)}/${action}`, {
          method: 'POST',
          headers: sendHeaders,
          body: payload,
          signal: requestsInFlight.signal,
        });
      } catch (error) {
        refuse(networkError(error));
        return;
      }
      if (!response.ok) {
        refuse(await serverError(response));
        return;
      }
      // Accepted: the call's move ends the request. When it came first, the request is over now; and
      // an approval that others must follow moves nothing, so its answer ends it.
      const answer: unknown = await response.json().catch(() => undefined);
      const waitsForOthers = typeof answer === 'object' && answer !== null && typeof (answer as { left?: unknown }).left === 'number' && (answer as { left: number }).left > 0;
      if (mine() && (waitsForOthers || records.get(id)?.status !== sentAt)) setRequest(id, undefined);
    })();
    return true;
  }

  const canSend = (id: string, allowed: (status: ToolCallStatus) => boolean): ToolCallRecord | undefined => {
    const call = records.get(id);
    if (closed || call === undefined || !allowed(call.status) || requests.get(id)?.state === 'sending') return undefined;
    return call;
  };
  const awaiting = (status: ToolCallStatus) => status === 'awaiting_approval';

  function notProposedHere(id: string | undefined, name: string, source: ProposalSource, turn: string | undefined): RejectedCall<unknown> {
    const at = clock.now();
    const reason: Reason<'unauthorized'> = { code: 'unauthorized', message: NOT_HERE };
    return {
      id: id ?? `remote_${++localIds}`,
      name,
      source,
      generatedId: id === undefined,
      turn,
      createdAt: at,
      updatedAt: at,
      status: 'rejected',
      history: [
        { status: 'pending', at },
        { status: 'rejected', at, reason },
      ],
      input: undefined,
      output: undefined,
      reason,
      preview: undefined,
      repairs: undefined,
      evicted: false,
    };
  }

  function propose(input: unknown, proposeOptions?: { readonly id?: string; readonly turn?: string }): ToolCallRecord {
    let reading: ReturnType<typeof readProposal> | undefined;
    try {
      reading = readProposal(input, DEFAULT_LIMITS);
    } catch {
      reading = undefined; // a hostile object: still an answer, never a throw
    }
    const id = proposeOptions?.id ?? (reading === undefined ? undefined : reading.ok ? reading.proposal.id : reading.id);
    const known = id === undefined ? undefined : records.get(id);
    if (known !== undefined) return known;
    const name = reading === undefined ? '' : reading.ok ? reading.proposal.name : (reading.name ?? '');
    return notProposedHere(id, name, reading?.ok ? reading.proposal.source : (reading?.source ?? 'normalised'), proposeOptions?.turn);
  }

  function settled(id: string): Promise<SettledCall> {
    const call = records.get(id);
    if (call !== undefined && isTerminal(call.status)) return Promise.resolve(call as SettledCall);
    if (closed) return Promise.reject(new Error(`gate.settled: the remote gate is closed, and call "${id}" has not settled.`));
    return new Promise((resolve, reject) => {
      let list = waiters.get(id);
      if (list === undefined) waiters.set(id, (list = []));
      list.push({ resolve, reject });
    });
  }

  return {
    propose,
    settled,
    stopped: (id) => stoppedCall({ get: (known) => records.get(known), subscribeCall: mirror.subscribeCall, settled }, id),
    run(input, proposeOptions) {
      const call = propose(input, proposeOptions);
      return isTerminal(call.status) ? Promise.resolve(call as SettledCall) : settled(call.id);
    },
    get: (id) => records.get(id),
    approve(id, edit) {
      const call = canSend(id, awaiting);
      if (call === undefined) return false;
      const shown = call.input;
      // The hash is of what the person was shown; the edit is what they want to run instead.
      const edited = typeof edit === 'object' && edit !== null && Object.hasOwn(edit, 'input') ? { input: edit.input } : {};
      return send(id, 'approve', async () => ({ inputHash: await inputHash(shown), ...edited }));
    },
    deny(id, reason) {
      if (canSend(id, awaiting) === undefined) return false;
      return send(id, 'deny', () => (reason === undefined ? {} : { reason }));
    },
    cancel(id, reason) {
      if (canSend(id, (status) => !isTerminal(status)) === undefined) return false;
      return send(id, 'cancel', () => (reason === undefined ? {} : { reason }));
    },
    requestOf: (id) => requests.get(id),
    // The page compiles no schema: the server gate checks every call (see its own `check`).
    check: () => [],
    calls: mirror.calls,
    subscribeCall: mirror.subscribeCall,
    toolResult(id, format) {
      const call = records.get(id);
      if (call === undefined) throw new Error(`gate.toolResult: the server's feed has not delivered a call with id "${id}".`);
      if (!isTerminal(call.status)) {
        throw new Error(`gate.toolResult: call "${id}" is ${call.status}; answer it once it has settled (await gate.settled(id)).`);
      }
      return toolResult(call as SettledCall, format);
    },
    audit,
    get tools() {
      return tools.list();
    },
    replaceTools: (next) => tools.replace(next, [...records.values()].filter((call) => !isTerminal(call.status)).map((call) => call.id)),
    limits: DEFAULT_LIMITS,
    stream: {
      open: (init) => records.get(init.id ?? '') ?? notProposedHere(init.id, init.name, init.source, init.turn),
      preview: () => {},
      close: (id) => records.get(id),
      truncate: (id) => records.get(id),
      refuse: (id) => records.get(id),
    },
    connection,
    close() {
      if (closed) return;
      closed = true;
      feed.close();
      requestsInFlight.abort();
      for (const [id, list] of waiters) {
        for (const { reject } of list) reject(new Error(`gate.settled: the remote gate was closed before call "${id}" settled.`));
      }
      waiters.clear();
    },
  };
}

/** A ledger event as the audit log's event: the same move, with the tool's name. */
function auditEventOf(event: FeedMove['event'], name: string): AuditEvent {
  const move = { callId: event.callId, name, from: event.from, to: event.to, at: event.at };
  // Refusal codes (stale, forbidden, …) are the server's; they are kept as sent.
  return event.reason === undefined ? move : { ...move, reason: event.reason as Reason };
}
