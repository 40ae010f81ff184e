import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { RequestError } from '../gate/call-request.ts';
import type { Clock } from '../call/clock.ts';
import type { ConnectionState } from '../gate/connection.ts';
import { messageOf } from '../record/text.ts';
import { networkError, serverError } from './server-error.ts';

/**
 * Where an event feed is: opening for the first time, open and delivering, waiting to open again
 * after it broke, or stopped (by `close()`, or by an answer that retrying cannot change, such as
 * 401). Whether a feed that keeps failing counts as offline is its gate's call.
 *
 * @example
 * const state: FeedState = 'reconnecting';
 */
export type FeedState = Exclude<ConnectionState, 'offline'>;

/**
 * How a feed waits before opening again: `initialMs` doubled after each failure up to `maxMs`,
 * then jittered down by up to half, so that many pages that lost one server do not come back at
 * the same instant. `random` is injectable for tests.
 *
 * @example
 * const retry: Retry = { initialMs: 1000, maxMs: 60_000 };
 */
export interface Retry {
  readonly initialMs?: number;
  readonly maxMs?: number;
  readonly random?: () => number;
}

/**
 * What {@link openEventFeed} needs.
 *
 * @example
 * openEventFeed({ url, fetch, headers: async () => ({}), clock: systemClock, retry: {}, idleTimeoutMs: 60_000, maxMessageChars: 16e6, resumeAfter: () => undefined, onMessage, onHeard, onState, onError });
 */
export interface EventFeedOptions {
  readonly url: string;
  readonly fetch: typeof globalThis.fetch;
  readonly headers: () => HeadersInit | Promise<HeadersInit>;
  readonly clock: Clock;
  readonly retry: Retry;
  /** Reopen when nothing (not even a heartbeat) arrived for this long; `Infinity` never does. */
  readonly idleTimeoutMs: number;
  /** The longest message the feed buffers; a longer one breaks the connection. */
  readonly maxMessageChars: number;
  /** The sequence number to resume after (sent as `Last-Event-ID`), or `undefined` for a fresh feed. */
  readonly resumeAfter: () => number | undefined;
  readonly onMessage: (message: EventSourceMessage) => void;
  /** Something arrived (messages or a heartbeat): told once per chunk read, after its messages. */
  readonly onHeard: () => void;
  /**
   * The feed's state changed. `failedAttempts` counts the attempts to open it that failed since it
   * was last live (the break of a live feed is not one of them).
   */
  readonly onState: (
    state: FeedState,
    error: RequestError | undefined,
    retryAt: number | undefined,
    failedAttempts: number,
  ) => void;
  readonly onError: (error: unknown) => void;
}

/**
 * A running feed. `close()` aborts the connection and every timer; nothing is delivered after it.
 *
 * @example
 * const feed = openEventFeed(options);
 * feed.close();
 */
export interface EventFeed {
  readonly close: () => void;
  /** While the feed waits out a backoff, opens it now (the browser is online again, the tab is shown, a request failed). */
  readonly retryNow: () => void;
}

// A few seconds at most: a page whose server came back catches up within about that, not half a minute later.
const DEFAULT_RETRY = { initialMs: 500, maxMs: 4_000 };
// Answers that may change if asked again; any other refusal (401, 403, 404, …) stops the feed.
const RETRYABLE = new Set([408, 425, 429]);

/**
 * Reads a server-sent event stream with `fetch` (so that it can carry an `Authorization` header,
 * which `EventSource` cannot), parses it with `eventsource-parser`, and keeps it open: when the
 * stream ends or breaks it opens again after a backoff with jitter, sending `Last-Event-ID`.
 * An answer that asking again cannot change (401, 403, 404, a page that is not an event stream)
 * stops it and is reported, rather than asked again and again.
 *
 * @example
 * const feed = openEventFeed({ ...options, onMessage: (message) => console.log(message.event, message.data) });
 */
export function openEventFeed(options: EventFeedOptions): EventFeed {
  const { clock } = options;
  const backoff = createBackoff(options.retry);
  let closed = false;
  let failedAttempts = 0;
  let opened = false;
  let controller: AbortController | undefined;
  let retryTimer: unknown;
  let idleTimer: unknown;

  function connect(): void {
    retryTimer = undefined;
    controller = new AbortController();
    void read(controller);
  }

  async function read(connection: AbortController): Promise<void> {
    const { signal } = connection;
    const after = options.resumeAfter();
    const opening = await openStream(options, signal, after);
    if (opening.kind !== 'open') {
      if (opening.kind === 'broken') broken(signal, opening.error);
      else if (!signal.aborted) (opening.kind === 'retry' ? retry : stop)(opening.error);
      return;
    }
    if (signal.aborted) return;
    const { body } = opening;
    let tooLong = false;
    let heard = false;
    const parser = createParser({
      maxBufferSize: options.maxMessageChars,
      onEvent: (message) => {
        backoff.heard();
        heard = true;
        if (!signal.aborted) deliver(message);
      },
      onComment: () => {
        backoff.heard();
        heard = true;
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') tooLong = true;
      },
    });
    // A resumed feed sends no snapshot, and may send nothing until the next move: it is live once accepted.
    if (after !== undefined) live();
    const reader = body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        armIdle(connection);
        const { done, value } = await reader.read();
        if (done) break;
        if (signal.aborted) return;
        parser.feed(decoder.decode(value, { stream: true }));
        // Once per chunk rather than per message: a burst of moves is one update of the connection.
        if (heard && !signal.aborted) options.onHeard();
        heard = false;
        if (tooLong) {
          retry({
            code: 'too_large',
            message: `a message of the feed is longer than ${options.maxMessageChars} characters`,
          });
          return;
        }
      }
    } catch (error) {
      broken(signal, networkError(error));
      return;
    } finally {
      clock.clearTimeout(idleTimer);
    }
    broken(signal, { code: 'ended', message: 'the server ended the feed' });
  }

  /** The connection ended: open it again, unless `close()` or a newer connection ended it on purpose. */
  function broken(signal: AbortSignal, error: RequestError): void {
    if (closed) return;
    if (signal.aborted && signal.reason !== IDLE) return;
    retry(
      signal.reason === IDLE
        ? { code: 'idle', message: `nothing arrived on the feed for ${options.idleTimeoutMs} ms` }
        : error,
    );
  }

  function deliver(message: EventSourceMessage): void {
    if (message.event === 'snapshot') live();
    try {
      options.onMessage(message);
    } catch (error) {
      options.onError(error);
    }
  }

  function live(): void {
    if (opened) return;
    opened = true;
    failedAttempts = 0;
    options.onState('live', undefined, undefined, 0);
  }

  function armIdle(connection: AbortController): void {
    if (!Number.isFinite(options.idleTimeoutMs)) return;
    clock.clearTimeout(idleTimer);
    idleTimer = clock.setTimeout(() => connection.abort(IDLE), options.idleTimeoutMs);
  }

  function retry(error: RequestError): void {
    if (closed) return;
    controller?.abort();
    failedAttempts = opened ? 0 : failedAttempts + 1;
    opened = false;
    const delay = backoff.next();
    const retryAt = clock.now() + delay;
    options.onState('reconnecting', error, retryAt, failedAttempts);
    retryTimer = clock.setTimeout(connect, delay);
  }

  function stop(error: RequestError): void {
    if (closed) return;
    shut();
    options.onState('closed', error, undefined, failedAttempts);
    options.onError(new Error(`toolgate remote: the event feed stopped (${error.code}): ${error.message}`));
  }

  function shut(): void {
    closed = true;
    controller?.abort();
    clock.clearTimeout(retryTimer);
    clock.clearTimeout(idleTimer);
  }

  options.onState('connecting', undefined, undefined, 0);
  connect();
  return {
    close() {
      if (closed) return;
      shut();
      options.onState('closed', undefined, undefined, failedAttempts);
    },
    retryNow() {
      if (closed || retryTimer === undefined) return;
      clock.clearTimeout(retryTimer);
      connect();
    },
  };
}

/**
 * The wait before the next attempt to open the feed: half a ceiling, plus up to as much again at
 * random (so that a server's clients do not all come back at once). The ceiling doubles with each
 * attempt up to `maxMs`, and starts again from `initialMs` once the feed is heard from.
 */
function createBackoff(retry: Retry): { readonly heard: () => void; readonly next: () => number } {
  const initialMs = retry.initialMs ?? DEFAULT_RETRY.initialMs;
  const maxMs = retry.maxMs ?? DEFAULT_RETRY.maxMs;
  const random = retry.random ?? Math.random;
  let failures = 0;
  return {
    heard: () => {
      failures = 0;
    },
    next: () => {
      const ceiling = Math.min(maxMs, initialMs * 2 ** failures);
      failures++;
      return Math.round(ceiling / 2 + (ceiling / 2) * random());
    },
  };
}

/** How asking for the stream went: a body to read, or what to do instead. */
type Opening =
  | { readonly kind: 'open'; readonly body: ReadableStream<Uint8Array> }
  | { readonly kind: 'retry' | 'stop' | 'broken'; readonly error: RequestError };

/** Asks for the stream, resuming after `after`: an answer that is not an event stream says whether to ask again. */
async function openStream(
  options: EventFeedOptions,
  signal: AbortSignal,
  after: number | undefined,
): Promise<Opening> {
  let headers: Headers;
  try {
    headers = new Headers(await options.headers());
  } catch (error) {
    return {
      kind: 'retry',
      error: { code: 'headers_failed', message: `the feed's headers could not be made: ${messageOf(error)}` },
    };
  }
  headers.set('Accept', 'text/event-stream');
  if (after !== undefined) headers.set('Last-Event-ID', String(after));
  let response: Response;
  try {
    response = await options.fetch(options.url, { headers, signal, cache: 'no-store' });
  } catch (error) {
    return { kind: 'broken', error: networkError(error) };
  }
  if (!response.ok) {
    const error = await serverError(response);
    return { kind: response.status >= 500 || RETRYABLE.has(response.status) ? 'retry' : 'stop', error };
  }
  const type = response.headers.get('Content-Type') ?? '';
  if (!type.toLowerCase().startsWith('text/event-stream') || response.body === null) {
    await response.body?.cancel().catch(() => {});
    return {
      kind: 'stop',
      error: {
        code: 'bad_response',
        message: `the feed at ${options.url} answered ${type || 'no content type'}, not text/event-stream`,
      },
    };
  }
  return { kind: 'open', body: response.body };
}

// The abort reason of a connection that went quiet, told apart from `close()`.
const IDLE = Symbol('idle');
