import { storable } from '../ledger/guards/storable.ts';
import { decisionStatus, type Decision } from '../decision/decision.ts';
import type { ServerGate } from '../gate/server-gate.ts';
import type { ApprovalLinks } from '../links/approval-links.ts';
import { linkPages } from '../links/link-route.ts';
import { eventStreams } from './event-stream.ts';
import { inboxSource } from './inbox-stream.ts';

/**
 * What {@link toolgateHandler} takes.
 *
 * @example
 * const options: ToolgateHandlerOptions = { authenticate: async (request) => (await session(request))?.userId ?? null, basePath: '/api/toolgate' };
 */
export interface ToolgateHandlerOptions {
  /** The authenticated principal (your user's id) for a request, or `null` when there is none. */
  readonly authenticate: (request: Request) => string | null | undefined | Promise<string | null | undefined>;
  /** Where the routes are mounted (default `/api/toolgate`). */
  readonly basePath?: string;
  /** The largest request body read, in bytes (default 16 KiB); a larger one is refused with 413 before it is read. */
  readonly maxBodyBytes?: number;
  /**
   * How long reading a request body may take in all, in milliseconds (default 10 s): a body that
   * has not ended by then is answered 408, so that a client dripping bytes cannot hold the request.
   */
  readonly bodyTimeoutMs?: number;
  /** How often the event feed sends a comment so that proxies keep it open, in milliseconds (default 15 s). */
  readonly heartbeatMs?: number;
  /**
   * How many event feeds one principal may have open on this handler at once (default 16): one
   * more ends the principal's oldest feed, whose client (a tab closed long ago, a laptop asleep, or
   * one of too many tabs) reconnects with `Last-Event-ID` if it is still there.
   */
  readonly maxFeedsPerPrincipal?: number;
  /** Receives errors no response can carry (a feed that broke mid-stream). Default: `console.error`. */
  readonly onError?: (error: unknown) => void;
  /**
   * Serves approval links (`approvalLinks`, the same object the gate was given): `GET {base}/links/:token`
   * is the confirm page, `POST` the vote its forms send, in the name of the link's principal.
   */
  readonly links?: ApprovalLinks;
  /**
   * Whether a vote from a link also needs the person signed in (`authenticate`) as the principal the
   * link is for (default false: the link is the credential). The page then needs it too.
   */
  readonly linkNeedsLogin?: boolean;
}

/**
 * The codes of the handler's JSON errors, beside the decision codes it passes on.
 *
 * @example
 * if (body.error.code === 'unauthenticated') redirectToLogin();
 */
export type HandlerErrorCode =
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'malformed'
  | 'too_large'
  | 'timeout'
  | 'unsupported_media_type'
  | 'stale'
  | 'expired'
  | 'not_awaiting'
  | 'settled'
  | 'in_doubt'
  | 'not_in_doubt'
  | 'invalid_output'
  | 'not_committed'
  | 'no_compensate'
  | 'already_compensated'
  | 'unavailable';

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: HandlerErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/**
 * The HTTP face of a server gate, as a Web-standard `(Request) => Promise<Response>`: it mounts
 * unchanged as a Next.js route handler, in Hono, Bun or Deno, and in Node's http or Express through
 * `@hono/node-server`'s `getRequestListener`.
 *
 * - `GET {base}/sessions/:session/calls`: `{ seq, calls }`, the calls the principal may see;
 * - `GET {base}/sessions/:session/events`: Server-Sent Events, `id:` the ledger's seq; first an
 *   `event: snapshot` (`{ seq, calls }`), then `event: move` (`{ event, record }`) for each move;
 *   with `Last-Event-ID`, no snapshot and every move after that seq; heartbeats as comments;
 * - `GET {base}/approvals`: `{ seq, calls }`, the calls waiting for the principal's decision
 *   across sessions, oldest first (`serverGate.awaiting`); `GET {base}/approvals/events`: the same
 *   as an event feed (its snapshot also names the `principal`), whose moves bring a call in, change
 *   it, or take it out (approved by them, decided, expired), with `Last-Event-ID` as above;
 * - `POST {base}/calls/:id/approve` `{ inputHash, input? }` (`input`: the person's edit of the
 *   input they were shown), `/deny` `{ reason? }`, `/cancel` `{ reason? }`: the gate's decision,
 *   200 `{ ok: true, left? }` or 403 / 404 / 409 (an `invalid_edit` also lists its `issues`);
 * - `POST {base}/calls/:id/resolve` `{ outcome: 'committed' | 'not_executed', output?, note? }`:
 *   a person settles a call held in doubt (an `invalid_output` lists its `issues`);
 *   `/compensate` `{ reason? }`: undo a committed call through its tool's `compensate`;
 * - with `links`: `GET {base}/links/:token`, an approval link's confirm page (HTML; GET and HEAD
 *   decide nothing), and `POST` to it (a form, or JSON `{ vote: 'approve' | 'deny', reason? }`):
 *   the vote of the link's principal for the input it was made for, answered with an HTML page
 *   (2xx, or a 4xx that says why it was refused).
 *
 * Every refusal is JSON `{ error: { code, message } }`: 401 without a principal, 403 not allowed,
 * 404 unknown, 408 body not sent in time, 409 stale or settled, 413 body too large, 415 not JSON, 400 malformed, 503 the
 * ledger is down (try again: nothing was half-applied).
 *
 * @example
 * // app/api/toolgate/[...path]/route.ts (Next.js)
 * const handler = toolgateHandler(serverGate, { authenticate: async () => (await auth())?.user?.id ?? null });
 * export { handler as GET, handler as POST };
 */
export function toolgateHandler(
  gate: ServerGate,
  options: ToolgateHandlerOptions,
): (request: Request) => Promise<Response> {
  const base = trimSlashes(options.basePath ?? '/api/toolgate');
  const maxBody = options.maxBodyBytes ?? 16 * 1024;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 10_000;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const feed = eventStreams({
    heartbeatMs,
    onError,
    maxFeedsPerPrincipal: options.maxFeedsPerPrincipal ?? 16,
  });
  const principalOf = (request: Request) => authenticated(request, options.authenticate, onError);
  const links = linkPages(gate, options, principalOf, (request) =>
    readBody(request, maxBody, bodyTimeoutMs, true),
  );

  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = trimSlashes(url.pathname);
    const inside = base === '/' || path === base || path.startsWith(`${base}/`);
    if (!inside) throw new HttpError(404, 'not_found', `no route ${url.pathname}`);
    const parts = path
      .slice(base === '/' ? 0 : base.length)
      .split('/')
      .filter((part) => part !== '')
      .map(decodeSegment);
    const [collection, id, action, ...rest] = parts;
    if (links !== undefined && collection === 'links' && id !== undefined && action === undefined)
      return links(request, id);
    if (
      rest.length === 0 &&
      collection === 'sessions' &&
      id !== undefined &&
      (action === 'calls' || action === 'events')
    ) {
      allow(request, 'GET');
      const principal = await principalOf(request);
      if (!(await gate.canSee(id, principal)))
        throw new HttpError(403, 'forbidden', `you may not see session "${id}"`);
      if (action === 'calls') return json(200, await gate.snapshot(id, principal));
      return feed(request, principal, await lastEventId(request), {
        snapshot: () => gate.snapshot(id, principal),
        moves: (after) => gate.moves(id, { principal, after }),
      });
    }
    if (collection === 'approvals' && action === undefined && (id === undefined || id === 'events')) {
      allow(request, 'GET');
      const principal = await principalOf(request);
      if (id === undefined) return json(200, await gate.awaitingSnapshot(principal));
      return feed(request, principal, await lastEventId(request), inboxSource(gate, principal));
    }
    if (
      rest.length === 0 &&
      collection === 'calls' &&
      id !== undefined &&
      (action === 'approve' ||
        action === 'deny' ||
        action === 'cancel' ||
        action === 'resolve' ||
        action === 'compensate')
    ) {
      allow(request, 'POST');
      const principal = await principalOf(request);
      const body = await readBody(request, maxBody, bodyTimeoutMs);
      let decision: Decision;
      if (action === 'resolve') decision = await gate.resolve(id, { principal, ...resolution(body) });
      else if (action === 'approve') {
        const inputHash = body['inputHash'];
        if (typeof inputHash !== 'string' || !/^[0-9a-f]{64}$/.test(inputHash)) {
          throw new HttpError(
            400,
            'malformed',
            'approve needs { "inputHash": "<SHA-256 hex of the canonical JSON of the input you were shown>" }',
          );
        }
        const edit = {
          ...('input' in body ? { input: body['input'] } : {}),
          ...('name' in body ? { name: body['name'] } : {}),
        };
        decision = await gate.approve(id, { principal, inputHash, ...edit });
      } else {
        const reason = body['reason'];
        if (reason !== undefined && typeof reason !== 'string')
          throw new HttpError(400, 'malformed', '`reason` must be a string');
        const decide =
          action === 'deny' ? gate.deny : action === 'compensate' ? gate.compensate : gate.cancel;
        decision = await decide(id, reason === undefined ? { principal } : { principal, reason });
      }
      if (decision.ok)
        return json(200, decision.left === undefined ? { ok: true } : { ok: true, left: decision.left });
      return json(decisionStatus(decision), {
        error: {
          code: decision.code,
          message: decision.message,
          ...(decision.issues === undefined ? {} : { issues: decision.issues }),
        },
      });
    }
    throw new HttpError(404, 'not_found', `no route ${url.pathname}`);
  }

  /** The seq a feed resumes after; one beyond the chain's head was never sent, and would silently skip what is written up to it. */
  async function lastEventId(request: Request): Promise<number | undefined> {
    const lastId = request.headers.get('last-event-id');
    if (lastId === null || lastId.trim() === '') return undefined;
    if (!/^\d{1,15}$/.test(lastId.trim()))
      throw new HttpError(400, 'malformed', 'Last-Event-ID must be the seq of an event this feed sent');
    const after = Number(lastId.trim());
    const head = await gate.head();
    if (after > head)
      throw new HttpError(
        400,
        'malformed',
        `Last-Event-ID ${after} is beyond the last event written (${head}); reconnect without it to get a snapshot`,
      );
    return after;
  }

  return async (request) => {
    try {
      return await route(request);
    } catch (error) {
      if (error instanceof HttpError)
        return json(error.status, { error: { code: error.code, message: error.message } }, error.headers);
      if (isUnavailable(error))
        return json(
          503,
          { error: { code: 'unavailable', message: (error as Error).message } },
          { 'retry-after': '1' },
        );
      onError(error);
      return json(500, {
        error: { code: 'unavailable', message: 'the server could not answer this request' },
      });
    }
  };
}

/** The principal `authenticate` finds for a request; a 401 without one (an `authenticate` that throws finds none, and is reported). */
async function authenticated(
  request: Request,
  authenticate: ToolgateHandlerOptions['authenticate'],
  onError: (error: unknown) => void,
): Promise<string> {
  let principal: unknown;
  try {
    principal = await authenticate(request);
  } catch (error) {
    onError(error);
    principal = null;
  }
  if (typeof principal !== 'string' || principal === '')
    throw new HttpError(401, 'unauthenticated', 'sign in first: this request carries no principal');
  return principal;
}

/** A person's word on a call held in doubt, as the body of `/resolve` says it. */
function resolution(body: Record<string, unknown>): {
  outcome: 'committed' | 'not_executed';
  output?: unknown;
  note?: string;
} {
  const outcome = body['outcome'];
  if (outcome !== 'committed' && outcome !== 'not_executed')
    throw new HttpError(
      400,
      'malformed',
      'resolve needs { "outcome": "committed" | "not_executed", "output"?: <what the tool returned>, "note"?: "<how you know>" }',
    );
  const note = body['note'];
  if (note !== undefined && typeof note !== 'string')
    throw new HttpError(400, 'malformed', '`note` must be a string');
  if (outcome === 'not_executed' && 'output' in body)
    throw new HttpError(
      400,
      'malformed',
      'an effect that never happened has no output; send `output` only with "committed"',
    );
  return {
    outcome,
    ...('output' in body ? { output: body['output'] } : {}),
    ...(note === undefined ? {} : { note }),
  };
}

function allow(request: Request, method: 'GET' | 'POST'): void {
  if (request.method !== method)
    throw new HttpError(405, 'method_not_allowed', `use ${method} here`, { allow: method });
}

/** Reads a small JSON body (or, with `form`, a form's), refusing a large one before reading it, stopping a stream at the limit, and one that takes longer than `timeoutMs`. */
async function readBody(
  request: Request,
  limit: number,
  timeoutMs: number,
  form = false,
): Promise<Record<string, unknown>> {
  const type = request.headers.get('content-type') ?? '';
  const isForm = form && /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type);
  if (!isForm && !/^application\/json\s*(;|$)/i.test(type))
    throw new HttpError(
      415,
      'unsupported_media_type',
      form
        ? 'send the body as application/x-www-form-urlencoded or application/json'
        : 'send the body as application/json',
    );
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit)
    throw new HttpError(413, 'too_large', `the body may be at most ${limit} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body !== null) {
    const reader: ReadableStreamDefaultReader<Uint8Array> = request.body.getReader();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new HttpError(408, 'timeout', `the body did not arrive within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    deadline.catch(() => undefined);
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await Promise.race([reader.read(), deadline]);
      } catch (error) {
        clearTimeout(timer);
        await reader.cancel().catch(() => undefined);
        throw error;
      }
      const { value, done } = chunk;
      if (done) {
        clearTimeout(timer);
        break;
      }
      size += value.byteLength;
      if (size > limit) {
        clearTimeout(timer);
        await reader.cancel().catch(() => undefined);
        throw new HttpError(413, 'too_large', `the body may be at most ${limit} bytes`);
      }
      chunks.push(value);
    }
  }
  const text = new TextDecoder().decode(concat(chunks, size));
  if (isForm) return Object.fromEntries(new URLSearchParams(text));
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'malformed', 'the body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new HttpError(400, 'malformed', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

function trimSlashes(path: string): string {
  return (
    '/' +
    path
      .split('/')
      .filter((part) => part !== '')
      .join('/')
  );
}

function decodeSegment(segment: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'malformed', 'the path is not valid percent-encoding');
  }
  if (!storable(decoded))
    throw new HttpError(400, 'malformed', 'the path holds a NUL character (%00), which no id may hold');
  return decoded;
}

function isUnavailable(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ledger_unavailable'
  );
}
