import { createHash } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import { canonicalJson } from '@toolgate/core/kit';
import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import type { CallsTable, LedgerDatabase } from '../schema.ts';
import { readRecord } from '../stored-record.ts';

type Db = Kysely<LedgerDatabase> | Transaction<LedgerDatabase>;

/** The row check's query scope: the ledger's tables, and `toolgate_calls` as `c`. */
type CallsScope = LedgerDatabase & { c: LedgerDatabase['toolgate_calls'] };

/** Call rows read by one query of the row check. */
const PAGE = 500;

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
 * What one page of the row check found: the last call id it read (where the next page starts),
 * and, of that page's calls, the one whose row no longer holds what its last event holds with the
 * earliest last event.
 */
interface CallRowsPage {
  readonly read: number;
  readonly last: string | undefined;
  readonly changed: { readonly id: string; readonly seq: number } | undefined;
}

/**
 * Checks the next `limit` call rows (by id, after `after`) against the record their last event
 * holds, in one query whose cost is the page's, not the ledger's: each call's last event is found
 * through the `(call_id, seq)` index, and only a flag per call comes back. Calls with a move still
 * waiting to be chained are left to the next verification.
 *
 * @example
 * const page = await callRowsPage(db, undefined, 500);
 * if (page.changed) console.error(`call ${page.changed.id} was changed (its last event is ${page.changed.seq})`);
 */
async function callRowsPage(
  db: Kysely<LedgerDatabase>,
  after: string | undefined,
  limit: number,
): Promise<CallRowsPage> {
  // Each call's last event is looked up by a subquery per row (an index lookup on (call_id, seq)),
  // never by a join the planner could turn into a scan of every event (PostgreSQL does, for one,
  // when the table has no statistics yet).
  const lastEvent = (eb: ExpressionBuilder<CallsScope, 'c'>) =>
    eb
      .selectFrom('toolgate_events as e')
      .whereRef('e.call_id', '=', 'c.id')
      .where('e.record', 'is not', null)
      .orderBy('e.seq', 'desc')
      .limit(1);
  let query = db
    .selectFrom('toolgate_calls as c')
    .select((eb) => [
      'c.id as id',
      lastEvent(eb).select('e.seq').as('seq'),
      lastEvent(eb)
        .select((inner) =>
          inner.case().when('e.record', '<>', inner.ref('c.record')).then(1).else(0).end().as('changed'),
        )
        .as('changed'),
      eb
        .case()
        .when(
          eb.exists(eb.selectFrom('toolgate_pending as p').select('p.id').whereRef('p.call_id', '=', 'c.id')),
        )
        .then(1)
        .else(0)
        .end()
        .as('pending'),
    ])
    .orderBy('c.id')
    .limit(limit);
  if (after !== undefined) query = query.where('c.id', '>', after);
  const rows = await query.execute();
  let changed: CallRowsPage['changed'];
  for (const row of rows) {
    const seq = Number(row.seq);
    if (
      Number(row.changed) === 1 &&
      Number(row.pending) === 0 &&
      (changed === undefined || seq < changed.seq)
    )
      changed = { id: row.id, seq };
  }
  return { read: rows.length, last: rows.at(-1)?.id, changed };
}

/**
 * The first call (in the order of its last event) whose row no longer holds what the audit trail
 * says of it, for `verify()`: every call row is read, a page at a time (so no query grows with the
 * ledger, and on SQLite the event loop gets a turn between pages), keeping only the earliest found.
 * `onPage` hears how many rows have been checked after each page.
 *
 * @example
 * const changed = await firstChangedCall(db, (checked) => log(`${checked} calls checked`));
 * if (changed) console.error(`call ${changed.id} was changed (its last event is ${changed.seq})`);
 */
export async function firstChangedCall(
  db: Kysely<LedgerDatabase>,
  onPage?: (checked: number) => void,
): Promise<{ readonly id: string; readonly seq: number } | undefined> {
  let changed: CallRowsPage['changed'];
  let after: string | undefined;
  let checked = 0;
  for (;;) {
    const page = await callRowsPage(db, after, PAGE);
    if (page.read === 0) return changed;
    checked += page.read;
    if (page.changed !== undefined && (changed === undefined || page.changed.seq < changed.seq))
      changed = page.changed;
    onPage?.(checked);
    if (page.read < PAGE) return changed;
    after = page.last;
    await turn();
  }
}
