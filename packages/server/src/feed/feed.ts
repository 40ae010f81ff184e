import type { Committed, Ledger, LedgerEvent, LedgerMove, OwnCommit } from '../ledger/ledger.ts';

/**
 * One reader of the ledger's new events for the whole process, shared by every live feed and
 * every waiter, so that a hundred open feeds cost one query per commit, not a hundred.
 *
 * @example
 * const { from, stop } = tail.subscribe((moves) => moves.forEach(deliver));
 */
export interface Tail {
  /** Delivers to `listener` every move committed after `from`, in `seq` order, without gaps. */
  readonly subscribe: (listener: (moves: readonly LedgerMove[]) => void) => Following;
  /** The last `seq` committed now. */
  readonly head: () => Promise<number>;
  readonly close: () => void;
}

/**
 * A listener's hold on the {@link Tail}. A reader that must miss nothing waits for `from` before it
 * reads the ledger: a move committed after `from` is delivered, and its read sees every one before.
 *
 * @example
 * const { from, stop } = tail.subscribe(deliver);
 * const caughtUp = await ledger.movesAfter(after, { session });
 */
export interface Following {
  /** The last `seq` before the first delivery. Rejects when the ledger could not be read to start. */
  readonly from: Promise<number>;
  readonly stop: () => void;
}

const PAGE = 1000;
/**
 * How many calls' last move the tail keeps, so that a note about one of them needs no read. A note
 * follows its call's move closely (a delivery rides in the next move, or is recorded within
 * milliseconds); one about a call moved longer ago is read. Few: each holds its call's record.
 */
const KEPT = 32;

/**
 * Follows the ledger while anyone listens.
 *
 * @example
 * const tail = createTail(ledger, console.error);
 */
export function createTail(ledger: Ledger, onError: (error: unknown) => void): Tail {
  const listeners = new Set<(moves: readonly LedgerMove[]) => void>();
  let last: number | undefined;
  let starting: Promise<number> | undefined;
  let stopWaking: (() => void) | undefined;
  // Each call's last move delivered, most recent last: what a note about it goes out with, as
  // a read would give it (the call as it stands).
  const lastOf = new Map<string, LedgerMove>();
  let pumping = false;
  let again = false;
  let closed = false;

  async function pump(): Promise<void> {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        for (;;) {
          if (last === undefined || closed || listeners.size === 0) return;
          const moves = await ledger.movesAfter(last, { limit: PAGE });
          if (moves.length === 0) break;
          deliver(moves);
          if (moves.length < PAGE) break;
        }
      } while (again);
    } catch (error) {
      // The database is out of reach for now: the next wake (or the ledger's poll) tries again.
      onError(error);
    } finally {
      pumping = false;
    }
  }

  const head = () => ledger.head();

  function deliver(moves: readonly LedgerMove[]): void {
    last = moves[moves.length - 1]?.event.seq ?? last;
    for (const move of moves) {
      lastOf.delete(move.event.callId);
      lastOf.set(move.event.callId, move);
    }
    for (const callId of lastOf.keys()) {
      if (lastOf.size <= KEPT) break;
      lastOf.delete(callId);
    }
    for (const listener of [...listeners]) {
      try {
        listener(moves);
      } catch (error) {
        onError(error);
      }
    }
  }

  /**
   * This process's own commit follows on from what was delivered: delivered as it is, with no read.
   * Anything else (another process's commit, a gap, a read under way) is read from the ledger.
   */
  function woken(ownMoves: Committed | undefined, own?: OwnCommit): void {
    const committed =
      own === undefined || own.notes.length === 0 ? ownMoves : (withNotes(own, lastOf) ?? ownMoves);
    if (typeof committed === 'object') {
      const first = committed[0]?.event.seq;
      if (!pumping && last !== undefined && first === last + 1 && !closed && listeners.size > 0)
        return deliver(committed);
      if (
        first !== undefined &&
        last !== undefined &&
        (committed[committed.length - 1]?.event.seq ?? first) <= last
      )
        return;
    } else if (typeof committed === 'number' && last !== undefined && committed <= last) return;
    void pump();
  }

  return {
    subscribe(listener) {
      listeners.add(listener);
      if (stopWaking === undefined && !closed) {
        stopWaking = ledger.onCommitted(woken);
        const start: Promise<number> = head().then(
          (seq) => {
            if (starting === start) {
              last ??= seq;
              void pump();
            }
            return last ?? seq;
          },
          (error: unknown) => {
            // Start again with the next listener; the ones waiting now are told through `from`.
            if (starting === start) {
              stopWaking?.();
              stopWaking = undefined;
              starting = undefined;
            }
            onError(error);
            throw error;
          },
        );
        starting = start;
      }
      // Where this listener starts: what the tail has delivered so far, or the head it starts from.
      const from = last !== undefined ? Promise.resolve(last) : (starting ?? head());
      from.catch(() => undefined);
      return {
        from,
        stop() {
          listeners.delete(listener);
          if (listeners.size === 0) {
            stopWaking?.();
            stopWaking = undefined;
            starting = undefined;
            last = undefined;
            lastOf.clear();
          }
        },
      };
    },
    head,
    close() {
      closed = true;
      listeners.clear();
      lastOf.clear();
      stopWaking?.();
      stopWaking = undefined;
    },
  };
}

/**
 * An own commit's events in seq order, each note with its call's last move's record (from the
 * commit, or as the tail delivered it before: `lastOf`), or `undefined` when a note's call is not
 * known there. Only meaningful for a commit that follows on from what was delivered.
 */
function withNotes(
  { moves, notes }: OwnCommit,
  lastOf: ReadonlyMap<string, LedgerMove>,
): LedgerMove[] | undefined {
  const all: LedgerMove[] = [];
  const within = new Map<string, LedgerMove>();
  let next = 0;
  for (const note of notes) {
    for (let move = moves[next]; move !== undefined && move.event.seq < note.seq; move = moves[(next += 1)]) {
      within.set(move.event.callId, move);
      all.push(move);
    }
    const standing = within.get(note.callId) ?? lastOf.get(note.callId);
    if (standing === undefined) return undefined;
    all.push(noteMove(note, standing));
  }
  for (; next < moves.length; next += 1) all.push(moves[next] as LedgerMove);
  return all;
}

/** A note goes out as a move with its call's record as it stands, read when first asked for. */
function noteMove(event: LedgerEvent, standing: LedgerMove): LedgerMove {
  return {
    event,
    get record() {
      return standing.record;
    },
  };
}

/**
 * An async iterator fed by pushes, whose `return()` ends it at once, even while it waits: a feed
 * whose client went away must let go of its subscription without waiting for the next event.
 *
 * @example
 * const feed = pushFeed<number>(() => unsubscribe());
 * feed.push(1);
 */
export interface PushFeed<T> extends AsyncIterableIterator<T> {
  return(): Promise<IteratorResult<T>>;
  readonly push: (item: T) => void;
  readonly fail: (error: unknown) => void;
  readonly closed: () => boolean;
  /** How many items were pushed and not taken yet. */
  readonly size: () => number;
  /** Resolves once the consumer has taken every item pushed so far, or the feed ended. */
  readonly drained: () => Promise<void>;
}

/**
 * Makes a {@link PushFeed}; `onClose` runs once, when the consumer stops or the feed fails.
 *
 * @example
 * const feed = pushFeed<LedgerMove>(() => stop());
 */
export function pushFeed<T>(onClose: () => void): PushFeed<T> {
  const queue: T[] = [];
  let waiting: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  let done = false;
  let failure: { error: unknown } | undefined;
  let emptied: (() => void)[] = [];
  const checkDrained = () => {
    if (queue.length > 0 && !done) return;
    const waiting = emptied;
    emptied = [];
    for (const resolve of waiting) resolve();
  };

  const finish = () => {
    if (done) return;
    done = true;
    onClose();
    checkDrained();
  };

  const feed: PushFeed<T> = {
    push(item) {
      if (done) return;
      if (waiting !== undefined) {
        const { resolve } = waiting;
        waiting = undefined;
        resolve({ value: item, done: false });
      } else queue.push(item);
    },
    fail(error) {
      if (done) return;
      finish();
      if (waiting !== undefined) {
        const { reject } = waiting;
        waiting = undefined;
        reject(error);
      } else failure = { error };
    },
    closed: () => done,
    size: () => queue.length,
    drained: () =>
      new Promise<void>((resolve) => {
        emptied.push(resolve);
        checkDrained();
      }),
    next() {
      if (queue.length > 0) {
        const value = queue.shift() as T;
        checkDrained();
        return Promise.resolve({ value, done: false });
      }
      if (failure !== undefined) {
        const { error } = failure;
        failure = undefined;
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      if (done) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
      });
    },
    return() {
      finish();
      queue.length = 0;
      if (waiting !== undefined) {
        const { resolve } = waiting;
        waiting = undefined;
        resolve({ value: undefined, done: true });
      }
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return feed;
    },
  };
  return feed;
}
