import type { Ledger, LedgerEvent, LedgerMove } from '../ledger/ledger.ts';
import { pushFeed, type PushFeed, type Tail } from './feed.ts';

/**
 * What a session's feed reads from: the ledger (to catch up), the process's tail (live), and
 * whether its principal may see the session, asked again for every event.
 *
 * @example
 * const source: SessionFeedSource = { ledger, tail, visible: () => sessions.mayView(principal, session, owner) };
 */
export interface SessionFeedSource {
  readonly ledger: Ledger;
  readonly tail: Tail;
  readonly visible: () => Promise<boolean>;
}

const CATCH_UP_PAGE = 500;

/**
 * One session's moves: every one after `after` (`0`: from the start), then live ones; without
 * `after`, live ones only. Each event is delivered once and in `seq` order, although it may
 * arrive twice (caught up from the ledger, and from the tail). `onClose` runs when the consumer
 * stops or the feed fails.
 *
 * @example
 * for await (const move of openSessionFeed(source, 'chat_1', 0, () => undefined)) send(move);
 */
export function openSessionFeed(source: SessionFeedSource, session: string, after: number | undefined, onClose: () => void): PushFeed<LedgerMove> {
  const { ledger, tail, visible } = source;
  let stop: (() => void) | undefined = undefined;
  const feed = pushFeed<LedgerMove>(() => {
    stop?.();
    onClose();
  });
  let cursor = -1;
  const queued: LedgerMove[] = [];
  let live = false;
  let delivering = Promise.resolve();
  const deliver = (items: readonly LedgerMove[]) => {
    delivering = delivering
      .then(async () => {
        for (const item of items) {
          if (feed.closed() || item.event.seq <= cursor) continue;
          cursor = item.event.seq;
          if (await visible()) feed.push(item);
        }
      })
      .catch((error: unknown) => feed.fail(error));
  };
  const tailing = tail.subscribe((items) => {
    const mine = items.filter((item) => item.event.session === session);
    if (live) deliver(mine);
    else queued.push(...mine);
  });
  stop = tailing.stop;
  void (async () => {
    try {
      // Catch up only once the tail has a starting point, so that the two meet without a gap. A
      // live-only feed starts at the ledger's head as it is now: the tail, already running, may not
      // have delivered everything up to it yet, and that is not "from now on".
      const from = await tailing.from;
      cursor = after ?? Math.max(from, await ledger.head());
      if (after !== undefined) {
        for (;;) {
          const page = await ledger.movesAfter(cursor, { session, limit: CATCH_UP_PAGE });
          deliver(page);
          await delivering;
          if (page.length < CATCH_UP_PAGE || feed.closed()) break;
        }
      }
      live = true;
      deliver(queued.splice(0));
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
      return result.done === true ? { value: undefined, done: true } : { value: result.value.event, done: false };
    },
    return: async () => {
      await source.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
