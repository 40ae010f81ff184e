import type { StoreApi } from 'zustand/vanilla';
import { systemClock, type Clock } from './call/clock.ts';
import { isTerminal, type SettledCall } from './record/record.ts';
import { createAuditLog } from './gate/audit.ts';
import type { CallRequest } from './gate/call-request.ts';
import type { ReadonlyStore } from './gate/call-store.ts';
import type { RemoteConnection } from './gate/connection.ts';
import type { ToolGate } from './gate/gate.ts';
import { stoppedCall } from './gate/stopped.ts';
import { DEFAULT_LIMITS } from './proposal/limits.ts';
import { toolResult } from './reply/tool-result.ts';
import { createRemoteConnection } from './remote/connection.ts';
import { createDecisions } from './remote/decisions.ts';
import { openEventFeed, type Retry } from './remote/event-feed.ts';
import { createFeedReader } from './remote/feed-reader.ts';
import { createInboxReader } from './remote/inbox-reader.ts';
import { createLiveCommit } from './remote/live-commit.ts';
import { createMirror } from './remote/mirror.ts';
import { createRemoteProposals } from './remote/proposals.ts';
import { createRemoteTools } from './remote/remote-tools.ts';
import type { ToolDefinition } from './tool/tool.ts';

export type { CallAction, CallRequest, RequestError, Resolution } from './gate/call-request.ts';
export type { ConnectionState, RemoteConnection } from './gate/connection.ts';
export type { Retry } from './remote/event-feed.ts';
export { waitsFor } from './remote/inbox-reader.ts';
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
  /** How long to wait before opening the feed again after it broke (default: 0.5 s doubling up to 4 s, jittered). */
  readonly retry?: Retry;
  /**
   * Where `online`, `offline` and `visibilitychange` are heard: to open a broken feed at once rather
   * than after its backoff, and to say `offline` while the browser has no network (default: the
   * page's `window` and `document`, when there are).
   */
  readonly events?: EventTarget;
  /**
   * After this many failed attempts in a row to reopen the feed, the connection says `offline`
   * rather than `reconnecting` (default 3: about 3.5 s with the default backoff). It is still retried.
   */
  readonly offlineAfter?: number;
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
 * What {@link createRemoteGate} takes to follow the signed-in principal's inbox instead of a
 * session: the calls waiting for their decision, across sessions (`GET {baseUrl}/approvals/events`).
 * The page commits nothing to a store: the calls are other people's.
 *
 * @example
 * const options: RemoteInboxOptions = { baseUrl: '/api/toolgate', inbox: true };
 */
export interface RemoteInboxOptions extends Omit<
  RemoteGateOptions<never>,
  'url' | 'session' | 'tools' | 'store'
> {
  readonly inbox: true;
  /** Where the server mounted `toolgateHandler` (its `basePath`), e.g. `/api/toolgate` or a full URL. */
  readonly baseUrl?: string;
  /** The same as `baseUrl`, by the name a session's gate gives it. */
  readonly url?: string;
  /** Tool definitions are not needed to decide; given, they are kept as `gate.tools`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly tools?: readonly ToolDefinition<any, any, any>[];
}

/**
 * A page's mirror of a server gate: the same {@link ToolGate} shape, so `@toolgate/react` works
 * unchanged, fed by the server's event feed. Approve, Deny and Cancel become requests to the
 * server; `requestOf(id)` tells whether one is on its way or was refused.
 *
 * @example
 * const gate: RemoteGate = createRemoteGate({ url: '/api/toolgate', session: chatId, tools, store });
 * gate.connection.subscribe(({ state, lastEventAt }) => console.log('feed', state, 'last event at', lastEventAt));
 */
export interface RemoteGate extends ToolGate {
  readonly requestOf: (id: string) => CallRequest | undefined;
  readonly resolve: NonNullable<ToolGate['resolve']>;
  readonly compensate: NonNullable<ToolGate['compensate']>;
  /**
   * The connection to the server (`connecting`, `live`, `reconnecting`, `offline`, `closed`), when
   * the feed last delivered something, and why it is not live, as a read-only Zustand store.
   * Decisions are sent only while it is `live`.
   */
  readonly connection: ReadonlyStore<RemoteConnection>;
  /** Stops the feed and any request on its way. Calls waiting in `settled` are rejected. */
  readonly close: () => void;
}

/**
 * Mirrors a server gate in the browser. It opens the server's event feed
 * (`GET {url}/sessions/{session}/events`, with `fetch`, so that `headers` can carry an
 * `Authorization` header), keeps `calls` in the same shape as a local gate's, and reopens the feed
 * after a backoff with `Last-Event-ID` when it breaks (at once when the browser is back online, the
 * tab is shown again, or a decision found no server). `connection` tells a UI where it stands.
 * `approve(id)` posts the SHA-256 of the
 * input the record shows (the server runs the call only for that input); `deny` and `cancel` post
 * too. Each returns `true` when a request was made and `false` when the call is not in a status
 * that allows it or a request about it is already on its way; one made while the connection is
 * not `live` is not sent, and `requestOf(id)` shows it refused with code `offline`.
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
 *
 * With `inbox: true` it follows the signed-in principal's inbox instead (`GET {baseUrl}/approvals/events`):
 * `calls` holds the calls waiting for their decision, across sessions, each leaving it once they
 * approved it or it ended; `approve` and `deny` decide as above.
 *
 * @example
 * const inbox = createRemoteGate({ baseUrl: '/api/toolgate', inbox: true });
 * // <ToolGateProvider gate={inbox}><ApprovalInbox /></ToolGateProvider>
 */
export function createRemoteGate<S = unknown>(options: RemoteGateOptions<S>): RemoteGate;
export function createRemoteGate(options: RemoteInboxOptions): RemoteGate;
export function createRemoteGate<S = unknown>(taken: RemoteGateOptions<S> | RemoteInboxOptions): RemoteGate {
  const inbox = 'inbox' in taken && taken.inbox === true;
  const options = taken as Partial<RemoteGateOptions<S>> & Omit<RemoteGateOptions<S>, 'url' | 'session'>;
  const url = inbox ? (taken.baseUrl ?? options.url) : options.url;
  if (typeof url !== 'string' || url === '')
    throw new Error(
      `createRemoteGate: \`${inbox ? 'baseUrl' : 'url'}\` must be where the server mounted toolgateHandler, e.g. "/api/toolgate".`,
    );
  const { session } = options;
  if (!inbox && (typeof session !== 'string' || session === ''))
    throw new Error('createRemoteGate: `session` must be the id of the session (conversation) to show.');
  const store = inbox ? undefined : options.store;
  const tools = createRemoteTools(options.tools ?? [], store !== undefined);
  const base = url.replace(/\/+$/, '');
  const clock = options.clock ?? systemClock;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const fetch =
    options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const given = options.headers;
  const headers = typeof given === 'function' ? given : () => given ?? {};
  const audit = createAuditLog(options.audit?.limit ?? Infinity, onError);

  // Each part gets what it may touch; the feed, created last, is reached through these arrows.
  const mirror = createMirror({
    onError,
    onMoved: (id) => decisions.moved(id),
    onSettled: (call) => tools.release(call.id),
  });
  const reader = inbox
    ? createInboxReader({ mirror, onError })
    : createFeedReader({
        session: session as string,
        mirror,
        liveCommit: createLiveCommit({ store, tools, onError }),
        audit,
        onError,
      });
  const connection = createRemoteConnection({
    clock,
    offlineAfter: options.offlineAfter ?? 3,
    events: options.events,
    wake: () => feed.retryNow(),
  });
  const decisions = createDecisions({
    base,
    fetch,
    headers,
    get: mirror.get,
    live: connection.live,
    retryNow: () => feed.retryNow(),
    publish: (id) => mirror.publish([id]),
  });
  const feed = openEventFeed({
    url: inbox
      ? `${base}/approvals/events`
      : `${base}/sessions/${encodeURIComponent(session as string)}/events`,
    fetch,
    headers,
    clock,
    retry: options.retry ?? {},
    idleTimeoutMs: options.idleTimeoutMs ?? 60_000,
    maxMessageChars: options.maxMessageChars ?? 16 * 1024 * 1024,
    resumeAfter: reader.seq,
    onMessage: reader.receive,
    onHeard: connection.heard,
    onState: connection.feedState,
    onError,
  });
  const proposals = createRemoteProposals(clock, mirror.get);
  let closed = false;

  return {
    propose: proposals.propose,
    settled: mirror.settled,
    stopped: (id) =>
      stoppedCall({ get: mirror.get, subscribeCall: mirror.subscribeCall, settled: mirror.settled }, id),
    run(input, proposeOptions) {
      const call = proposals.propose(input, proposeOptions);
      return isTerminal(call.status) ? Promise.resolve(call as SettledCall) : mirror.settled(call.id);
    },
    get: mirror.get,
    approve: decisions.approve,
    deny: decisions.deny,
    cancel: decisions.cancel,
    resolve: decisions.resolve,
    compensate: decisions.compensate,
    requestOf: decisions.requestOf,
    // The page compiles no schema: the server gate checks every call (see its own `check`).
    check: () => [],
    calls: mirror.calls,
    subscribeCall: mirror.subscribeCall,
    toolResult(id, format) {
      const call = mirror.get(id);
      if (call === undefined)
        throw new Error(`gate.toolResult: the server's feed has not delivered a call with id "${id}".`);
      if (!isTerminal(call.status)) {
        throw new Error(
          `gate.toolResult: call "${id}" is ${call.status}; answer it once it has settled (await gate.settled(id)).`,
        );
      }
      return toolResult(call as SettledCall, format);
    },
    audit,
    get tools() {
      return tools.list();
    },
    replaceTools: (next) => tools.replace(next, mirror.open()),
    limits: DEFAULT_LIMITS,
    stream: {
      open: proposals.open,
      preview: () => {},
      close: mirror.get,
      truncate: mirror.get,
      refuse: mirror.get,
    },
    connection: connection.store,
    close() {
      if (closed) return;
      closed = true;
      connection.stop();
      feed.close();
      decisions.close();
      mirror.close();
    },
  };
}
