import type { Clock, ToolDefinition } from '@toolgate/core';
import type { MoveWatch } from '../policy/admission.ts';
import { timersOf } from './plan.ts';
import { cancelTimers, scheduleTimers } from './timer-rows.ts';

/**
 * What the timers need to hear of moves: each call's tool, the gate's `approvalTtlMs`, the clock.
 *
 * @example
 * const watch = watchWaits({ toolOf: (name, id) => tools.entry(name, id)?.tool, approvalTtlMs, clock });
 */
export interface WaitWatchOptions {
  readonly toolOf: (name: string, id: string) => ToolDefinition | undefined;
  readonly approvalTtlMs: number;
  readonly clock: Clock;
}

/**
 * The keeper's watch for waits: a call that begins to wait for a person gets its reminder,
 * escalation steps and expiry written as timers (and its approval expires when its tool says), in
 * the transaction that makes it wait; a call that stops waiting has the timers not done yet
 * cancelled, in the transaction that decides it. `also` hears every move after that.
 *
 * @example
 * const keeper = createLedgerKeeper({ ...options, policy: { admit, release, watch: watchWaits(waitOptions) } });
 */
export function watchWaits(options: WaitWatchOptions, also?: MoveWatch): MoveWatch {
  const { toolOf, approvalTtlMs, clock } = options;
  return async (trx, move) => {
    const { previous, next } = move;
    const waits = next.status === 'awaiting_approval';
    const waited = previous?.status === 'awaiting_approval';
    if (waits && !waited) {
      const timers = timersOf(toolOf(next.name, next.id), next.updatedAt, approvalTtlMs);
      await scheduleTimers(trx, next.id, timers);
      const expiry = timers[timers.length - 1];
      // A decision that comes after the expiry is refused as late even before the expiry fires.
      if (expiry !== undefined)
        await trx
          .updateTable('toolgate_approvals')
          .set({ expires_at: expiry.dueAt })
          .where('call_id', '=', next.id)
          .where('decision', 'is', null)
          .execute();
    }
    if (waited && !waits) await cancelTimers(trx, next.id, clock.now());
    await also?.(trx, move);
  };
}
