import type { Ledger, LedgerEvent, LedgerMove } from '../ledger/ledger.ts';
import { pushFeed, type PushFeed, type Tail } from './feed.ts';

/**
 * What a session's feed reads from: the ledger (to catch up), the process's tail (live), and
 * whether its principal may see the move, asked again for every event. A feed of moves across
 * sessions (a principal's inbox) also names the moves it is about with `match`, so that the tail's
 * other moves never take its room.
 *
 * @example
 * const source: SessionFeedSource = { ledger, tail, visible: () => sessions.mayView(principal, session, owner) };
 */
export interface SessionFeedSource {
  readonly ledger: Ledger;
  readonly tail: Tail;
  readonly visible: (move: LedgerMove) => Promise<boolean>;
  readonly match?: (move: LedgerMove) => boolean;
}

/**
 * How many moves a session's feed holds for a consumer that has not taken them, at most: past it,
 * the feed stops holding live moves and reads them from the ledger once the consumer has taken
 * what it holds. Also the page it reads the ledger in.
 */
export const FEED_BACKLOG = 32;

/**
 * One session's moves: every one after `after` (`0`: from the start), then live ones; without
 * `after`, live ones only. Each event is delivered once and in `seq` order, although it may
 * arrive twice (caught up from the ledger, and from the tail). `onClose` runs when the consumer
 * stops or the feed fails.
 *
 * A consumer that takes moves more slowly than they come (a client reading the feed slowly) never
 * makes the feed hold more than {@link FEED_BACKLOG} of them: the ledger holds them anyway, so the
 * feed lets the live ones go, and reads them, a page at a time, as the consumer takes what it has.
 *
 * @example
 * for await (const move of openSessionFeed(source, 'chat_1', 0, () => undefined)) send(move);
 */
export function openSessionFeed(
  source: SessionFeedSource,
  /** `undefined`: the moves of every session that `match` picks. */
  session: string | undefined,
  after: number | undefined,
  onClose: () => void,
): PushFeed<LedgerMove> {
  const { ledger, tail, visible, match } = source;
  let stop: (() => void) | undefined = undefined;
  const feed = pushFeed<LedgerMove>(() => {
    stop?.();
    onClose();
  });
  // The last seq handed to the consumer (or passed over, as not visible).
  let cursor = -1;
  // Live: the tail's moves go straight to the consumer. Otherwise the feed reads the ledger, and
  // keeps the tail's moves meanwhile (a bounded number: past it, it lets them go and reads again).
  let live = false;
  let queued: LedgerMove[] = [];
  let missed = false;
  let reading: Promise<void> | undefined;
  let scheduled = 0;
  let delivering = Promise.resolve();
  const deliver = (items: readonly LedgerMove[]) => {
    scheduled += items.length;
    delivering = delivering
      .then(async () => {
        for (const item of items) {
          scheduled -= 1;
          if (feed.closed() || item.event.seq <= cursor) continue;
          cursor = item.event.seq;
          if (await visible(item)) feed.push(item);
        }
      })
      .catch((error: unknown) => feed.fail(error));
  };

  // Reads the ledger from the cursor, a page each time the consumer has taken what it holds, until
  // a page comes back short with nothing of the tail's let go meanwhile: then the tail's moves
  // that came during the reads follow on without a gap, and the feed is live again.
  const readOn = () => {
    reading ??= (async () => {
      try {
        for (;;) {
          await feed.drained();
          await delivering;
          if (feed.closed()) return;
          missed = false;
          const page = await ledger.movesAfter(cursor, {
            ...(session === undefined ? {} : { session }),
            limit: FEED_BACKLOG,
          });
          deliver(page);
          await delivering;
          if (page.length < FEED_BACKLOG && !missed) {
            live = true;
            const caught = queued;
            queued = [];
            deliver(caught);
            return;
          }
        }
      } catch (error) {
        feed.fail(error);
      } finally {
        reading = undefined;
      }
    })();
  };

  const tailing = tail.subscribe((items) => {
    const mine = items.filter(
      (item) => (session === undefined || item.event.session === session) && (match?.(item) ?? true),
    );
    if (mine.length === 0 || feed.closed()) return;
    if (live && feed.size() + scheduled + mine.length <= FEED_BACKLOG) return deliver(mine);
    if (live) {
      // The consumer is behind: these are in the ledger, read once it has taken what it holds.
      live = false;
      missed = true;
      readOn();
    } else if (queued.length + mine.length > FEED_BACKLOG) {
      queued = [];
      missed = true;
    } else queued.push(...mine);
  });
  stop = tailing.stop;
  void (async () => {
    try {
      // Read only once the tail has a starting point, so that the two meet without a gap. A
      // live-only feed starts at the ledger's head as it is now: the tail, already running, may not
      // have delivered everything up to it yet, and that is not "from now on".
      const from = await tailing.from;
      cursor = after ?? Math.max(from, await ledger.head());
      readOn();
    } catch (error) {
      feed.fail(error);
    }
  })();
  return feed;
}

/**
 * The events of a feed of moves, without their records.
 *
 * @example
 * for await (const event of eventsOf(feed)) log(event.seq);
 */
export function eventsOf(source: AsyncIterableIterator<LedgerMove>): AsyncIterableIterator<LedgerEvent> {
  const iterator: AsyncIterableIterator<LedgerEvent> = {
    next: async () => {
      const result = await source.next();
      return result.done === true
        ? { value: undefined, done: true }
        : { value: result.value.event, done: false };
    },
    return: async () => {
      await source.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
