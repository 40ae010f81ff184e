import { isTerminal, type SettledCall, type ToolCallRecord } from '@toolgate/core';
import { type Pipeline } from '@toolgate/core/kit';
import type { Tail } from '../feed/feed.ts';
import type { LedgerKeeper } from '../keeper/ledger-keeper.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Waiters } from './waiters.ts';

/**
 * The gate's one subscription to the ledger's tail: it settles waiters on endings committed by any
 * process, and stops this process's run of a call that another instance ended or took over.
 *
 * @example
 * const follower = createFollower({ ledger, tail, keeper, pipeline, waiters, onError });
 * follower.guard('call_1'); // after this process claimed it
 * const call = await follower.settled('call_1');
 */
export interface Follower {
  /** Follows a call this process now runs, so that an ending committed elsewhere stops its tool. */
  readonly guard: (id: string) => void;
  /** Resolves once the call has ended (here or elsewhere); `undefined` for an unknown id. */
  readonly settled: (id: string) => Promise<SettledCall | undefined>;
  /** Resolves once the call has ended or is held in doubt for a person; `undefined` for an unknown id. */
  readonly stopped: (id: string) => Promise<ToolCallRecord | undefined>;
  /** Stops following. */
  readonly close: () => void;
}

/**
 * What the follower works with.
 *
 * @example
 * const parts: FollowerParts = { ledger, tail, keeper, pipeline, waiters, onError };
 */
export interface FollowerParts {
  readonly ledger: Ledger;
  readonly tail: Tail;
  readonly keeper: LedgerKeeper;
  readonly pipeline: Pipeline;
  readonly waiters: Waiters;
  /** A call ended (on any instance). */
  readonly ended: (id: string) => void;
  readonly onError: (error: unknown) => void;
}

/**
 * Builds the follower.
 *
 * @example
 * const follower = createFollower(parts);
 */
export function createFollower(parts: FollowerParts): Follower {
  const { ledger, tail, keeper, pipeline, waiters, onError } = parts;
  let stopFollowing: (() => void) | undefined;
  let following: Promise<number> | undefined;
  // Once following, the gate follows until it closes: restarting the tail for each call would read
  // the ledger's head each time, and a call this process runs needs every ending after its claim.
  let live = false;

  const stopRun = (id: string, message: string) => {
    void pipeline.stop(id, new DOMException(message, 'AbortError'));
    keeper.release(id);
  };

  /** Stops this process's run of a call whose claim has passed to another process, or ended. */
  const recheck = (id: string) => {
    const claim = keeper.claims.get(id);
    if (claim === undefined) return;
    ledger
      .read((db) =>
        db.selectFrom('toolgate_calls').select(['status', 'fence']).where('id', '=', id).executeTakeFirst(),
      )
      .then((row) => {
        if (keeper.claims.get(id) !== claim || (row?.status === 'executing' && row.fence === claim.fence))
          return;
        stopRun(id, 'Another process has taken this call over, or it ended elsewhere.');
      })
      .catch(onError);
  };

  const unfollow = () => {
    stopFollowing?.();
    stopFollowing = undefined;
    live = false;
  };

  const follow = () => {
    if (stopFollowing !== undefined) return;
    const subscription = tail.subscribe((moves) => {
      for (const move of moves) {
        // Only the event is read here until the call has ended: a move's record may be read from its text when asked for.
        const { event } = move;
        const id = event.callId;
        // Another process took over a call this one runs: look whether the claim is still ours.
        if (event.reason?.code === 'recovered' && keeper.claims.has(id) && pipeline.running(id)) recheck(id);
        if (event.reason?.code === 'held') waiters.hold(move.record);
        if (!isTerminal(event.to) || event.from === event.to) continue;
        const { record } = move;
        parts.ended(record.id);
        // This process's own ending needs no stop: the run is the one that ended it.
        if (
          pipeline.running(record.id) &&
          keeper.claims.has(record.id) &&
          event.from === 'executing' &&
          !keeper.ending(record.id)
        ) {
          stopRun(record.id, record.reason?.message ?? 'The call ended elsewhere.');
        }
        waiters.settle(record as SettledCall);
      }
    });
    stopFollowing = subscription.stop;
    following = subscription.from;
    live = false;
    void following.then(
      () => {
        if (stopFollowing === subscription.stop) live = true;
      },
      () => undefined,
    );
    // A tail that could not start (the ledger was out of reach) is let go: the next waiter starts it again.
    following.catch(() => stopFollowing === subscription.stop && unfollow());
  };

  return {
    guard(id) {
      // A tail already live before the claim delivers every ending after it; one that starts now
      // may have started past an ending, so the call is looked at once the tail reads.
      if (live) return;
      follow();
      void following?.then(() => recheck(id), onError);
    },
    async settled(id) {
      const ended = waiters.recent(id);
      if (ended !== undefined) return ended;
      const waiting = waiters.untilEnded(id);
      // A call this process runs ends here (its waiters are settled by the move) or, if another
      // process ends it, on the live tail, which has followed since before the claim.
      if (keeper.claims.has(id) && live) return waiting.ended;
      follow();
      // Read the call once the tail follows: a move after `following` reaches the waiter, the read sees the rest.
      await following;
      const known = (await keeper.read(id))?.record;
      if (known === undefined || isTerminal(known.status)) {
        waiting.cancel();
        return known as SettledCall | undefined;
      }
      return waiting.ended;
    },
    async stopped(id) {
      const ended = waiters.recent(id);
      if (ended !== undefined) return ended;
      const ending = waiters.untilEnded(id);
      const holding = waiters.untilHeld(id);
      const done = () => {
        ending.cancel();
        holding.cancel();
      };
      follow();
      await following;
      const known = (await keeper.read(id))?.record;
      if (known === undefined || isTerminal(known.status) || known.doubt !== undefined) {
        done();
        return known;
      }
      const first = await Promise.race<ToolCallRecord>([ending.ended, holding.held]);
      done();
      return first;
    },
    close: unfollow,
  };
}
