import { isTerminal, type SettledCall, type ToolCallRecord } from '@toolgate/core';
import type { Ledger } from '../ledger/ledger.ts';
import { readRecord, storeRecord } from '../ledger/stored-record.ts';

const TERMINAL = ['committed', 'cancelled', 'rejected', 'failed'] as const;

/**
 * A turn by its key in the ledger: turn ids are the app's or a provider's, so they are unique
 * within a session only.
 *
 * @example
 * const key: TurnKey = { session: 'chat_1', id: 'chatcmpl-9' };
 */
export interface TurnKey {
  readonly session: string;
  readonly id: string;
}

/**
 * A turn whose stream is over, as its reader read it: each call by id, with the record it was
 * answered with when that record is final (an ended call, or a refusal that was not stored).
 *
 * @example
 * const turn: ClosedTurn = { session: 'chat_1', id: 'turn_1', principal: 'alice', calls: [{ id: 'call_1' }] };
 */
export interface ClosedTurn extends TurnKey {
  readonly principal: string;
  readonly calls: readonly { readonly id: string; readonly answer?: ToolCallRecord }[];
}

/**
 * A claim on running a turn's handler: the fencing token every later write of this run carries.
 *
 * @example
 * const claim = await claimTurn(ledger, key, { instance, now, leaseMs });
 * if (claim !== undefined) await run(claim.calls);
 */
export interface TurnClaim extends TurnKey {
  readonly principal: string;
  readonly calls: readonly SettledCall[];
  readonly fence: number;
  readonly attempt: number;
}

/**
 * Writes a closed turn with its calls. The same turn again (same principal, same calls) is
 * `same`; the key taken by another turn is `conflict`, and nothing is written.
 *
 * @example
 * if ((await recordTurn(ledger, turn, Date.now())) === 'conflict') report();
 */
export async function recordTurn(
  ledger: Ledger,
  turn: ClosedTurn,
  now: number,
): Promise<'recorded' | 'same' | 'conflict'> {
  return ledger.transaction(async (trx) => {
    const known = await trx
      .selectFrom('toolgate_turns')
      .select('principal')
      .where('session', '=', turn.session)
      .where('id', '=', turn.id)
      .executeTakeFirst();
    if (known !== undefined) {
      const ids = await trx
        .selectFrom('toolgate_turn_calls')
        .select('call_id')
        .where('session', '=', turn.session)
        .where('turn_id', '=', turn.id)
        .orderBy('position')
        .execute();
      const same =
        known.principal === turn.principal &&
        ids.length === turn.calls.length &&
        ids.every((row, index) => row.call_id === turn.calls[index]?.id);
      return same ? 'same' : 'conflict';
    }
    await trx
      .insertInto('toolgate_turns')
      .values({
        session: turn.session,
        id: turn.id,
        principal: turn.principal,
        created_at: now,
        done_at: null,
        lease_owner: null,
        lease_expires_at: null,
        fence: 0,
        attempts: 0,
      })
      .execute();
    await trx
      .insertInto('toolgate_turn_calls')
      .values(
        turn.calls.map((call, position) => ({
          session: turn.session,
          turn_id: turn.id,
          position,
          call_id: call.id,
          answer: call.answer === undefined ? null : storeRecord(call.answer),
        })),
      )
      .execute();
    return 'recorded';
  });
}

/**
 * The turns not yet handled that wait on this call.
 *
 * @example
 * for (const key of await turnsOfCall(ledger, event.callId)) void settle(key);
 */
export async function turnsOfCall(ledger: Ledger, callId: string): Promise<TurnKey[]> {
  const rows = await ledger.read((db) =>
    db
      .selectFrom('toolgate_turn_calls as c')
      .innerJoin('toolgate_turns as t', (join) =>
        join.onRef('t.session', '=', 'c.session').onRef('t.id', '=', 'c.turn_id'),
      )
      .select(['t.session', 't.id'])
      .where('c.call_id', '=', callId)
      .where('c.answer', 'is', null)
      .where('t.done_at', 'is', null)
      .execute(),
  );
  return rows.map((row) => ({ session: row.session, id: row.id }));
}

/**
 * Turns not yet handled, nobody's claim on them live, whose calls have all ended: the ones a
 * process that died (or a handler that threw) left behind.
 *
 * @example
 * for (const key of await readyTurns(ledger, clock.now(), 100)) void settle(key);
 */
export async function readyTurns(ledger: Ledger, now: number, limit: number): Promise<TurnKey[]> {
  const rows = await ledger.read((db) =>
    db
      .selectFrom('toolgate_turns as t')
      .select(['t.session', 't.id'])
      .where('t.done_at', 'is', null)
      .where((eb) => eb.or([eb('t.lease_expires_at', 'is', null), eb('t.lease_expires_at', '<=', now)]))
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('toolgate_turn_calls as c')
              .leftJoin('toolgate_calls as k', 'k.id', 'c.call_id')
              .select('c.position')
              .whereRef('c.session', '=', 't.session')
              .whereRef('c.turn_id', '=', 't.id')
              .where('c.answer', 'is', null)
              .where((inner) =>
                inner.or([inner('k.status', 'is', null), inner('k.status', 'not in', TERMINAL)]),
              ),
          ),
        ),
      )
      .orderBy('t.created_at')
      .limit(limit)
      .execute(),
  );
  return rows.map((row) => ({ session: row.session, id: row.id }));
}

/**
 * Claims the turn for this process, if it is not handled yet, nobody else's claim on it is live
 * and each of its calls has ended; `undefined` otherwise.
 *
 * @example
 * const claim = await claimTurn(ledger, key, { instance: 'app-1', now: Date.now(), leaseMs: 30_000 });
 */
export async function claimTurn(
  ledger: Ledger,
  key: TurnKey,
  lease: { readonly instance: string; readonly now: number; readonly leaseMs: number },
): Promise<TurnClaim | undefined> {
  return ledger.transaction(async (trx) => {
    const turn = await trx
      .selectFrom('toolgate_turns')
      .selectAll()
      .where('session', '=', key.session)
      .where('id', '=', key.id)
      .executeTakeFirst();
    if (
      turn === undefined ||
      turn.done_at !== null ||
      (turn.lease_expires_at !== null && turn.lease_expires_at > lease.now)
    )
      return undefined;
    const rows = await trx
      .selectFrom('toolgate_turn_calls')
      .select(['call_id', 'answer'])
      .where('session', '=', key.session)
      .where('turn_id', '=', key.id)
      .orderBy('position')
      .execute();
    const stored = rows.filter((row) => row.answer === null).map((row) => row.call_id);
    const found =
      stored.length === 0
        ? []
        : await trx
            .selectFrom('toolgate_calls')
            .select(['id', 'session', 'status', 'record'])
            .where('id', 'in', stored)
            .execute();
    const byId = new Map(found.filter((row) => row.session === key.session).map((row) => [row.id, row]));
    const calls: SettledCall[] = [];
    for (const row of rows) {
      const record = row.answer === null ? byId.get(row.call_id) : undefined;
      if (row.answer === null && (record === undefined || !isTerminal(record.status))) return undefined;
      calls.push(readRecord(row.answer ?? (record?.record as string)) as SettledCall);
    }
    const claimed = await trx
      .updateTable('toolgate_turns')
      .set({
        lease_owner: lease.instance,
        lease_expires_at: lease.now + lease.leaseMs,
        fence: turn.fence + 1,
        attempts: turn.attempts + 1,
      })
      .where('session', '=', key.session)
      .where('id', '=', key.id)
      .where('fence', '=', turn.fence)
      .where('done_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return undefined;
    return { ...key, principal: turn.principal, calls, fence: turn.fence + 1, attempt: turn.attempts + 1 };
  });
}

/**
 * Moves a claim's lease on to `until`; `false` when the claim is no longer this run's.
 *
 * @example
 * if (!(await renewTurn(ledger, claim, Date.now() + leaseMs))) stopRun();
 */
export async function renewTurn(
  ledger: Ledger,
  claim: TurnKey & { readonly fence: number },
  until: number,
): Promise<boolean> {
  return updateClaimed(ledger, claim, { lease_expires_at: until });
}

/**
 * The handler resolved: the turn is done for good; `false` when the claim had passed to another run.
 *
 * @example
 * await finishTurn(ledger, claim, Date.now());
 */
export async function finishTurn(
  ledger: Ledger,
  claim: TurnKey & { readonly fence: number },
  now: number,
): Promise<boolean> {
  return updateClaimed(ledger, claim, { done_at: now, lease_owner: null, lease_expires_at: null });
}

/**
 * The handler threw: the claim is let go, and the turn may be claimed again from `retryAt`.
 *
 * @example
 * await releaseTurn(ledger, claim, Date.now() + 1000);
 */
export async function releaseTurn(
  ledger: Ledger,
  claim: TurnKey & { readonly fence: number },
  retryAt: number,
): Promise<boolean> {
  return updateClaimed(ledger, claim, { lease_owner: null, lease_expires_at: retryAt });
}

async function updateClaimed(
  ledger: Ledger,
  claim: TurnKey & { readonly fence: number },
  values: {
    readonly done_at?: number;
    readonly lease_owner?: null;
    readonly lease_expires_at: number | null;
  },
): Promise<boolean> {
  const result = await ledger.transaction((trx) =>
    trx
      .updateTable('toolgate_turns')
      .set(values)
      .where('session', '=', claim.session)
      .where('id', '=', claim.id)
      .where('fence', '=', claim.fence)
      .where('done_at', 'is', null)
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows) === 1;
}
