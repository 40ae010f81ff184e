import type { ToolCallRecord } from '@toolgate/core';
import type { Transaction } from 'kysely';
import type { Ledger } from '../ledger/ledger.ts';
import type { LedgerDatabase } from '../ledger/schema.ts';

type Trx = Transaction<LedgerDatabase>;

/**
 * Indexes principals as asked to decide a waiting call, in the caller's transaction: each gets a
 * row in `toolgate_asks` (one already there keeps the time it was first asked), and the call shows
 * in their inbox (`serverGate.awaiting`) for as long as it waits and they have not approved it.
 * Write them in the transaction that asks them, so that the inbox and the call never disagree.
 *
 * It only adds: to ask more people about a call that waits (an escalation), write the record's
 * `approval.asked` with them too (the event feed, the read scope and the votes go by the record,
 * and a call that stops waiting takes out the rows of the principals it names), then call this
 * with the principals added. The rows go when the call stops waiting, and a
 * principal's row when they approve, with no further call.
 *
 * @example
 * await ledger.transaction(async (trx) => {
 *   // … the move that writes `approval.asked` with 'cfo' added …
 *   await writeAsks(trx, 'call_1', ['cfo'], clock.now());
 * });
 */
export async function writeAsks(
  trx: Trx,
  callId: string,
  principals: readonly string[],
  at: number,
): Promise<void> {
  const rows = [...new Set(principals)].map((principal) => ({ call_id: callId, principal, at }));
  if (rows.length === 0) return;
  await trx
    .insertInto('toolgate_asks')
    .values(rows)
    .onConflict((conflict) => conflict.columns(['principal', 'call_id']).doNothing())
    .execute();
}

/**
 * The principals a record still asks: on a waiting call, those its `approval.asked` names who
 * have not approved the input it holds (an approver of a quorum who approved is no longer asked).
 *
 * @example
 * const pending = stillAsked(record); // ['finance_1'] once manager_1 approved
 */
export function stillAsked(record: ToolCallRecord): readonly string[] {
  const approval = record.approval;
  if (record.status !== 'awaiting_approval' || approval?.asked === undefined) return [];
  const voted = new Set(approval.approvedBy.map((vote) => vote.principal));
  return approval.asked.filter((principal) => !voted.has(principal));
}

/**
 * Keeps the inbox index in step with a move of a call, in the move's transaction: a call that
 * starts to wait asks its principals; a vote takes its voter out (an edit that others must
 * approve again asks them again); a call that stops waiting leaves every inbox. `before` is the
 * call as it stood, `undefined` for a call written for the first time.
 *
 * @example
 * await followAsks(trx, current, next, clock.now());
 */
export async function followAsks(
  trx: Trx,
  before: ToolCallRecord | undefined,
  after: ToolCallRecord,
  at: number,
): Promise<void> {
  const waited = before?.status === 'awaiting_approval';
  if (after.status !== 'awaiting_approval') {
    // Its rows are those of the principals it asked (`writeAsks` adds only those): named, each is
    // found by the table's key, which begins with the principal.
    const asked = waited ? [...new Set(before.approval?.asked ?? [])] : [];
    if (asked.length > 0)
      await trx
        .deleteFrom('toolgate_asks')
        .where('principal', 'in', asked)
        .where('call_id', '=', after.id)
        .execute();
    return;
  }
  const voted = (after.approval?.approvedBy ?? []).map((vote) => vote.principal);
  if (waited && voted.length > 0)
    await trx
      .deleteFrom('toolgate_asks')
      .where('principal', 'in', voted)
      .where('call_id', '=', after.id)
      .execute();
  await writeAsks(trx, after.id, stillAsked(after), at);
}

/**
 * Whether a principal is, or was, asked about a call: being asked lets them see that call (and
 * vote on it), not the rest of its session.
 *
 * @example
 * if (await wasAsked(ledger, record, 'manager_1')) return record;
 */
export async function wasAsked(ledger: Ledger, record: ToolCallRecord, principal: string): Promise<boolean> {
  if (record.approval?.asked?.includes(principal) === true) return true;
  const row = await ledger.read((db) =>
    db
      .selectFrom('toolgate_asks')
      .select('call_id')
      .where('call_id', '=', record.id)
      .where('principal', '=', principal)
      .executeTakeFirst(),
  );
  return row !== undefined;
}
