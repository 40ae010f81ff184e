import type { CompensationLink, ToolCallRecord } from '@toolgate/core';
import type { Transaction } from 'kysely';
import type { Ledger, OutcomeNote } from '../ledger/ledger.ts';
import type { CallsTable, LedgerDatabase } from '../ledger/schema.ts';
import { readRecord, storeRecord } from '../ledger/stored-record.ts';

type Trx = Transaction<LedgerDatabase>;

/**
 * Where a note is written: the ledger, the transaction the caller holds, and the time of the note.
 *
 * @example
 * const where: NoteWrite = { ledger, trx, at: clock.now() };
 */
export interface NoteWrite {
  readonly ledger: Ledger;
  readonly trx: Trx;
  readonly at: number;
}

/**
 * Writes a changed record of a call that does not move (a committed call linked to its
 * compensation) together with the event that says why, naming who did it: the row only if it is
 * still the version read (else the caller's transaction is rolled back by the throw).
 *
 * @example
 * await annotate(where, row, { ...record, compensation }, principal, 'compensation', 'refund asked for');
 */
export async function annotate(
  { ledger, trx, at }: NoteWrite,
  row: CallsTable,
  record: ToolCallRecord,
  actor: string,
  code: OutcomeNote,
  message: string,
): Promise<void> {
  const stored = storeRecord(Object.freeze({ ...record, updatedAt: at }));
  const updated = await trx
    .updateTable('toolgate_calls')
    .set({ record: stored, version: row.version + 1, updated_at: at })
    .where('id', '=', row.id)
    .where('version', '=', row.version)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0)
    throw new Error(`call "${row.id}" moved while it was being noted`);
  await ledger.recordEvents(trx, [
    {
      callId: row.id,
      session: row.session,
      from: record.status,
      to: record.status,
      actor,
      at,
      reason: { code, message },
      record: stored,
    },
  ]);
}

/**
 * Tells a committed call how its compensation ended, in the transaction of the compensation's
 * last move: its link says the status and what `compensate` returned (or why it did not commit).
 *
 * @example
 * if (next.compensates !== undefined && isTerminal(next.status)) await linkCompensation(where, next, actor, lock);
 */
export async function linkCompensation(
  where: NoteWrite,
  compensation: ToolCallRecord,
  actor: string,
  lock: (trx: Trx, id: string) => Promise<CallsTable | undefined>,
): Promise<void> {
  const id = compensation.compensates;
  if (id === undefined) return;
  const row = await lock(where.trx, id);
  if (row === undefined) return;
  const record = readRecord(row.record);
  if (record.status !== 'committed' || record.compensation?.id !== compensation.id) return;
  const link: CompensationLink = {
    id: record.compensation.id,
    by: record.compensation.by,
    ...(record.compensation.reason === undefined ? {} : { reason: record.compensation.reason }),
    status: compensation.status,
    ...(compensation.status === 'committed'
      ? { output: compensation.output }
      : compensation.reason === undefined
        ? {}
        : { failure: compensation.reason }),
  };
  const ended =
    compensation.status === 'committed'
      ? `its compensation "${compensation.id}" committed: the call was undone`
      : `its compensation "${compensation.id}" ended ${compensation.status}${compensation.reason === undefined ? '' : ` (${compensation.reason.code}: ${compensation.reason.message})`}; the call was not undone`;
  await annotate(where, row, { ...record, compensation: link }, actor, 'compensation', ended);
}
