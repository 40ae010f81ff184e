import type { Transaction } from 'kysely';
import type { Ledger } from '../ledger/ledger.ts';
import type { LedgerDatabase, TimersTable } from '../ledger/schema.ts';
import type { PlannedTimer } from './plan.ts';

type Trx = Transaction<LedgerDatabase>;

/**
 * A timer row by its key.
 *
 * @example
 * const key: TimerKey = { call_id: 'call_1', kind: 'reminder', step: 0 };
 */
export type TimerKey = Pick<TimersTable, 'call_id' | 'kind' | 'step'>;

/**
 * A timer this process claimed: the fencing token its firing must still find on the row.
 *
 * @example
 * const claimed: ClaimedTimer = { call_id: 'call_1', kind: 'expiry', step: 0, due_at: now, fence: 3 };
 */
export type ClaimedTimer = TimerKey & Pick<TimersTable, 'due_at' | 'fence'>;

/**
 * Writes a waiting call's timers, in the transaction that makes it wait. A call that waits again
 * (a key already written) keeps the rows it has.
 *
 * @example
 * await scheduleTimers(trx, 'call_1', timersOf(tool, now, ttl));
 */
export async function scheduleTimers(
  trx: Trx,
  callId: string,
  timers: readonly PlannedTimer[],
): Promise<void> {
  if (timers.length === 0) return;
  await trx
    .insertInto('toolgate_timers')
    .values(
      timers.map((timer) => ({
        call_id: callId,
        kind: timer.kind,
        step: timer.step,
        due_at: timer.dueAt,
        done_at: null,
        outcome: null,
        lease_owner: null,
        lease_expires_at: null,
        fence: 0,
      })),
    )
    .onConflict((conflict) => conflict.columns(['call_id', 'kind', 'step']).doNothing())
    .execute();
}

/**
 * Marks every timer of a call not done yet `cancelled`, in the transaction of the move that ended
 * its wait: a call decided before its timers are due never has them fire.
 *
 * @example
 * await cancelTimers(trx, 'call_1', Date.now());
 */
export async function cancelTimers(trx: Trx, callId: string, now: number): Promise<void> {
  await trx
    .updateTable('toolgate_timers')
    .set({ done_at: now, outcome: 'cancelled', lease_owner: null, lease_expires_at: null })
    .where('call_id', '=', callId)
    .where('done_at', 'is', null)
    .execute();
}

/**
 * Timers due by `now` that nobody's live claim holds, soonest first.
 *
 * @example
 * for (const row of await dueTimers(ledger, Date.now(), 100)) await claimTimer(ledger, row, lease);
 */
export async function dueTimers(ledger: Ledger, now: number, limit: number): Promise<TimersTable[]> {
  return ledger.read((db) =>
    db
      .selectFrom('toolgate_timers')
      .selectAll()
      .where('done_at', 'is', null)
      .where('due_at', '<=', now)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]))
      .orderBy('due_at')
      .limit(limit)
      .execute(),
  );
}

/**
 * When a timer not done may next be taken: the soonest due time, or the end of the claim holding
 * it when that is later; `undefined` when none is left.
 *
 * @example
 * const at = await nextTimerAt(ledger);
 */
export async function nextTimerAt(ledger: Ledger): Promise<number | undefined> {
  const rows = await ledger.read((db) =>
    db
      .selectFrom('toolgate_timers')
      .select(['due_at', 'lease_expires_at'])
      .where('done_at', 'is', null)
      .orderBy('due_at')
      .limit(50)
      .execute(),
  );
  const times = rows.map((row) => Math.max(row.due_at, row.lease_expires_at ?? 0));
  return times.length === 0 ? undefined : Math.min(...times);
}

/**
 * Claims a due timer for this process until `now + leaseMs`, if it is still not done and nobody
 * else's claim on it is live; `undefined` otherwise.
 *
 * @example
 * const claimed = await claimTimer(ledger, row, { instance: 'app-1', now: Date.now(), leaseMs: 30_000 });
 */
export async function claimTimer(
  ledger: Ledger,
  row: TimersTable,
  lease: { readonly instance: string; readonly now: number; readonly leaseMs: number },
): Promise<ClaimedTimer | undefined> {
  const fence = row.fence + 1;
  const result = await ledger.transaction((trx) =>
    trx
      .updateTable('toolgate_timers')
      .set({ lease_owner: lease.instance, lease_expires_at: lease.now + lease.leaseMs, fence })
      .where('call_id', '=', row.call_id)
      .where('kind', '=', row.kind)
      .where('step', '=', row.step)
      .where('fence', '=', row.fence)
      .where('done_at', 'is', null)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', lease.now)]))
      .executeTakeFirst(),
  );
  if (Number(result.numUpdatedRows) !== 1) return undefined;
  return { call_id: row.call_id, kind: row.kind, step: row.step, due_at: row.due_at, fence };
}

/**
 * Marks a claimed timer done, in the transaction that did what it was due for; `false` (and the
 * caller rolls back) when the claim is no longer this firing's or the timer is done already.
 *
 * @example
 * if (!(await finishTimer(trx, claimed, 'fired', now))) throw new Error('lost the claim');
 */
export async function finishTimer(
  trx: Trx,
  claimed: ClaimedTimer,
  outcome: 'fired' | 'failed' | 'cancelled',
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('toolgate_timers')
    .set({ done_at: now, outcome, lease_owner: null, lease_expires_at: null })
    .where('call_id', '=', claimed.call_id)
    .where('kind', '=', claimed.kind)
    .where('step', '=', claimed.step)
    .where('fence', '=', claimed.fence)
    .where('done_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
