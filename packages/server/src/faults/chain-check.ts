import { createHash } from 'node:crypto';
import { canonicalJson } from '@toolgate/core';
import type { Kysely, Transaction } from 'kysely';
import type { CallsTable, LedgerDatabase } from '../ledger/schema.ts';
import { readRecord } from '../ledger/stored-record.ts';

type Db = Kysely<LedgerDatabase> | Transaction<LedgerDatabase>;

/**
 * The record a call's last move wrote into the audit trail: its last chained event's, or, when a
 * move of it still waits to be chained (PostgreSQL), that one's. `undefined` when the trail holds
 * none (a call written before records were kept, or one removed from the trail).
 *
 * @example
 * const trail = await trailRecord(trx, 'call_1');
 */
export async function trailRecord(db: Db, id: string): Promise<string | undefined> {
  const pending = await db
    .selectFrom('toolgate_pending')
    .select('record')
    .where('call_id', '=', id)
    .where('record', 'is not', null)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (pending?.record != null) return pending.record;
  const chained = await db
    .selectFrom('toolgate_events')
    .select('record')
    .where('call_id', '=', id)
    .where('record', 'is not', null)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return chained?.record ?? undefined;
}

/**
 * Whether a call's row still says what the audit trail says of it, checked in the transaction
 * that is about to run it: the record the row holds is the one its last move wrote into the
 * trail, the `input` column is that record's input, and (for an approval) the approval's hash is
 * the hash of that input. Someone who can write to the database but not to the chain could
 * otherwise change the row of a call waiting for a person, and the person's approval would run
 * the input they were never shown. Answers why not, or `undefined` when it holds.
 *
 * @example
 * const tampered = await tampering(trx, row, approval.input_hash);
 * if (tampered !== undefined) return refuse(tampered);
 */
export async function tampering(
  trx: Db,
  row: CallsTable,
  approvalHash?: string,
): Promise<string | undefined> {
  const trail = await trailRecord(trx, row.id);
  if (trail !== row.record)
    return `the call's stored record is not the one its last event in the audit trail holds: the toolgate_calls row was changed outside the gate`;
  const input = canonicalJson(readRecord(row.record).input);
  if (row.input !== null && row.input !== input)
    return `the call's stored input is not the input its record holds: the toolgate_calls row was changed outside the gate`;
  const hash = createHash('sha256').update(input).digest('hex');
  if (approvalHash !== undefined && approvalHash !== hash)
    return `the approval's hash is not the hash of the input the audit trail holds: the toolgate_approvals row was changed outside the gate`;
  if (row.input_hash !== null && row.input_hash !== hash)
    return `the call's stored input hash is not the hash of its input: the toolgate_calls row was changed outside the gate`;
  return undefined;
}

/**
 * The first call (in the order of its last event) whose row no longer holds what the audit
 * trail says of it, for `verify()`; calls with a move still waiting to be chained are left to
 * the next verification.
 *
 * @example
 * const changed = await firstChangedCall(db);
 * if (changed) console.error(`call ${changed.id} was changed (its last event is ${changed.seq})`);
 */
export async function firstChangedCall(
  db: Kysely<LedgerDatabase>,
): Promise<{ readonly id: string; readonly seq: number } | undefined> {
  const last = db
    .selectFrom('toolgate_events')
    .select((eb) => ['call_id', eb.fn.max('seq').as('last')])
    .where('record', 'is not', null)
    .groupBy('call_id')
    .as('last');
  const row = await db
    .selectFrom('toolgate_calls')
    .innerJoin(last, 'last.call_id', 'toolgate_calls.id')
    .innerJoin('toolgate_events', 'toolgate_events.seq', 'last.last')
    .select(['toolgate_calls.id as id', 'toolgate_events.seq as seq'])
    .whereRef('toolgate_events.record', '<>', 'toolgate_calls.record')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('toolgate_pending')
            .select('toolgate_pending.id')
            .whereRef('toolgate_pending.call_id', '=', 'toolgate_calls.id'),
        ),
      ),
    )
    .orderBy('toolgate_events.seq')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : { id: row.id, seq: Number(row.seq) };
}
