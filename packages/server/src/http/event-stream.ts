import type { ToolCallRecord } from '@toolgate/core';
import type { LedgerMove } from '../ledger/ledger.ts';

/**
 * How many bytes of encoded events a feed keeps ready for a client that has not read them yet.
 * Beyond it the feed waits for the client, and its session's moves wait in the ledger.
 */
const FEED_BUFFER_BYTES = 64 * 1024;

/**
 * What the handler's event streams need.
 *
 * @example
 * const options: EventStreamOptions = { heartbeatMs: 15_000, onError: console.error, maxFeedsPerPrincipal: 16 };
 */
export interface EventStreamOptions {
  readonly heartbeatMs: number;
  readonly onError: (error: unknown) => void;
  readonly maxFeedsPerPrincipal: number;
}

/**
 * What one event stream sends: its snapshot (`{ seq, calls }`, and whatever else its reader needs)
 * and its moves after a seq: a session's, or a principal's inbox.
 *
 * @example
 * const source: FeedSource = { snapshot: () => gate.snapshot('chat_1', 'user_42'), moves: (after) => gate.moves('chat_1', { principal: 'user_42', after }) };
 */
export interface FeedSource {
  readonly snapshot: () => Promise<{ readonly seq: number; readonly calls: ToolCallRecord[] }>;
  readonly moves: (after: number) => AsyncIterableIterator<LedgerMove>;
}

/**
 * Makes the handler's Server-Sent Events responses: a source's snapshot (unless it resumes after a
 * seq), then its moves, with heartbeats. Each principal has at most `maxFeedsPerPrincipal` open
 * (of any source): one more ends the oldest.
 *
 * @example
 * const feed = eventStreams({ heartbeatMs: 15_000, onError, maxFeedsPerPrincipal: 16 });
 * return feed(request, 'user_42', undefined, { snapshot: () => gate.snapshot('chat_1', 'user_42'), moves: (after) => gate.moves('chat_1', { principal: 'user_42', after }) });
 */
export function eventStreams({ heartbeatMs, onError, maxFeedsPerPrincipal }: EventStreamOptions) {
  const maxFeeds = Math.max(1, Math.floor(maxFeedsPerPrincipal));
  // Each principal's open feeds (the functions that end them), oldest first.
  const feedsOf = new Map<string, Set<() => void>>();

  /** Counts a new feed of `principal`, ending the oldest past the bound; answers the release. */
  const admit = (principal: string, end: () => void): (() => void) => {
    const mine = feedsOf.get(principal) ?? new Set<() => void>();
    feedsOf.set(principal, mine);
    mine.add(end);
    // The newest connection is the one most likely to have someone behind it: a feed of a tab
    // closed long ago, or a laptop asleep, goes first (its client reconnects with Last-Event-ID).
    for (const oldest of mine) {
      if (mine.size <= maxFeeds) break;
      oldest();
    }
    return () => {
      mine.delete(end);
      if (mine.size === 0 && feedsOf.get(principal) === mine) feedsOf.delete(principal);
    };
  };

  return (request: Request, principal: string, after: number | undefined, source: FeedSource): Response => {
    const encoder = new TextEncoder();
    let open = true;
    let finish: () => void = () => undefined;
    let moves: AsyncIterableIterator<LedgerMove> | undefined;
    let started: Promise<void> = Promise.resolve();
    // Pulled, not pushed: a move is taken from the feed only when the client has read what was
    // sent before (beyond a small buffer), so a client that reads slowly is sent moves at its
    // pace, and the feed reads them from the ledger meanwhile instead of holding them.
    const body = new ReadableStream<Uint8Array>(
      {
        start(controller) {
          const send = (text: string) => {
            if (!open) return;
            try {
              controller.enqueue(encoder.encode(text));
            } catch {
              finish();
            }
          };
          // A client that reads nothing needs no heartbeat, and would only pile them up.
          const heartbeat = setInterval(
            () => (controller.desiredSize ?? 0) > 0 && send(': heartbeat\n\n'),
            heartbeatMs,
          );
          heartbeat.unref?.();
          let release: () => void = () => undefined;
          finish = () => {
            if (!open) return;
            open = false;
            clearInterval(heartbeat);
            request.signal.removeEventListener('abort', finish);
            release();
            void moves?.return?.();
            try {
              controller.close();
            } catch {
              // already closed by the client
            }
          };
          release = admit(principal, finish);
          request.signal.addEventListener('abort', finish);
          send(': toolgate\n\n');
          started = (async () => {
            try {
              let from = after;
              if (from === undefined) {
                const first = await source.snapshot();
                send(message(first.seq, 'snapshot', first));
                from = first.seq;
              }
              if (open) moves = source.moves(from);
            } catch (error) {
              onError(error);
              finish();
            }
          })();
        },
        async pull(controller) {
          await started;
          if (moves === undefined) return;
          try {
            const next = await moves.next();
            if (next.done === true || !open) return finish();
            const { event, record } = next.value;
            controller.enqueue(encoder.encode(message(event.seq, 'move', { event, record })));
          } catch (error) {
            onError(error);
            finish();
          }
        },
        cancel() {
          finish();
        },
      },
      { highWaterMark: FEED_BUFFER_BYTES, size: (chunk) => chunk.byteLength },
    );
    return new Response(body, {
      status: 200,
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      },
    });
  };
}

function message(
  seq: number,
  event: 'snapshot' | 'move',
  data: { seq: number; calls: ToolCallRecord[] } | LedgerMove,
): string {
  return `id: ${seq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
