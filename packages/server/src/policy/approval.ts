import { isExecuting, type ExecutingCall } from '@toolgate/core/kit';
import { type ApprovalState, type Clock, type InputEdit, type ToolCallRecord } from '@toolgate/core';
import type { Transaction } from 'kysely';
import type { VoteVia } from '../decision/channel-reason.ts';
import { refused, type Decision } from '../decision/decision.ts';
import { hashInput, type LedgerKeeper } from '../keeper/ledger-keeper.ts';
import type { Ledger, NewLedgerEvent } from '../ledger/ledger.ts';
import type { ApprovalsTable, CallsTable, LedgerDatabase } from '../ledger/schema.ts';
import { readRecord, storeRecord } from '../ledger/stored-record.ts';
import { readmit } from './admission.ts';
import type { Budget } from './budget.ts';
import type { CheckedEdit } from './edit.ts';

type Trx = Transaction<LedgerDatabase>;

/**
 * What deciding an approval works with: the ledger, the keeper's moves, the clock, the gate's
 * budgets, and how many approvers a call of a tool needs.
 *
 * @example
 * const step: ApprovalStep = { ledger, keeper, clock, budgets, approvalsOf: (name, id) => tools.entry(name, id)?.tool.approvals ?? 1 };
 */
export interface ApprovalStep {
  readonly ledger: Ledger;
  readonly keeper: Pick<LedgerKeeper, 'moveIn' | 'refuse' | 'restate'>;
  readonly clock: Clock;
  readonly budgets: readonly Budget[];
  readonly approvalsOf: (name: string, id: string) => number;
}

/**
 * One approval, its hash already checked against what the call holds: the call's locked row, its
 * approval row, who approves, and the edit they made (checked outside the transaction).
 *
 * @example
 * const approving: Approving = { row, approval, principal: 'manager_1' };
 */
export interface Approving {
  readonly row: CallsTable;
  readonly approval: ApprovalsTable;
  readonly principal: string;
  readonly edit?: Extract<CheckedEdit, { ok: true }>;
  /** The channel the vote came through, named in the audit of a refusal. */
  readonly via?: VoteVia;
}

/**
 * What an approval did: the decision, and the call it started, when it was the last one needed.
 *
 * @example
 * const { decision, started } = await decideApproval(step, trx, approving);
 */
export interface ApprovalOutcome {
  readonly decision: Decision;
  readonly started?: ExecutingCall;
}

/**
 * Records one approval in the caller's transaction. An edit is decided against the budgets again
 * and, on a tool that needs several approvers, counts as its editor's approval of the new input
 * only (the others approved another input). Until enough distinct approvers have approved the same
 * input the call keeps waiting, its record saying who approved and how many are left; the last
 * approval consumes the call's approval and starts it, in this transaction. Each approval and each
 * edit is an event in the audit trail, naming the approver.
 *
 * @example
 * const outcome = await decideApproval(step, trx, { row, approval, principal, edit });
 */
export async function decideApproval(
  step: ApprovalStep,
  trx: Trx,
  approving: Approving,
): Promise<ApprovalOutcome> {
  const { row, approval, principal, edit } = approving;
  const { ledger, keeper, clock } = step;
  const record = readRecord(row.record);
  const now = clock.now();
  const required = step.approvalsOf(row.tool, row.id);
  let input = record.input;
  let hash = approval.input_hash;
  let edited = record.edit;
  if (edit !== undefined) {
    const problem = await readmit(
      ledger,
      trx,
      step,
      { record, session: row.session, principal: row.owner },
      edit.input,
    );
    if (problem !== undefined)
      return refusedIn(
        step,
        trx,
        approving,
        'invalid_edit',
        `the edited input does not fit a budget: ${problem}`,
      );
    input = edit.input;
    hash = hashInput(input);
    edited = { proposed: edit.proposed, by: principal, at: now, changes: edit.changes };
  }

  const mine = { principal, at: now, ...(approving.via === undefined ? {} : { via: approving.via }) };
  let approvedBy: ApprovalState['approvedBy'] = [mine];
  if (required > 1) {
    const vote = await quorumVote(trx, row.id, mine, hash, record.approval?.approvedBy ?? []);
    if (vote === undefined)
      return refusedIn(
        step,
        trx,
        approving,
        'already_approved',
        `"${principal}" has already approved this input; it needs ${required} different approvers`,
      );
    approvedBy = vote;
  }
  const left = Math.max(0, required - approvedBy.length);
  const state: ApprovalState | undefined =
    required > 1 || record.approval !== undefined
      ? // Who is asked, who asks and the budget that sent it stay as they were written.
        { ...record.approval, required, approvedBy, left }
      : undefined;
  const notes: NewLedgerEvent[] = [];
  const note = (code: 'approved' | 'edited', message: string, stored: string) =>
    notes.push({
      callId: row.id,
      session: row.session,
      from: record.status,
      to: record.status,
      actor: principal,
      at: now,
      reason: { code, message },
      record: stored,
    });

  if (left > 0) {
    const waiting = Object.freeze({
      ...record,
      input,
      updatedAt: now,
      ...(state === undefined ? {} : { approval: state }),
      ...(edited === undefined ? {} : { edit: edited }),
    }) as ToolCallRecord;
    const stored = storeRecord(waiting);
    if (edit !== undefined) {
      await trx
        .updateTable('toolgate_approvals')
        .set({ input_hash: hash })
        .where('call_id', '=', row.id)
        .where('decision', 'is', null)
        .execute();
      note('edited', editMessage(principal, edited as InputEdit), stored);
    }
    note(
      'approved',
      `"${principal}" approved; ${left} more approval${left === 1 ? '' : 's'} needed (${required} in all)`,
      stored,
    );
    // The same status with a new record: a move like any other, so the inbox and the watches
    // (an edit asks the others again) hear of it in this transaction.
    if (!(await keeper.restate(trx, row, waiting, notes)))
      throw new Error(`call "${row.id}" moved while it was being approved`); // rolls back
    return { decision: { ok: true, left } };
  }

  const taken = await trx
    .updateTable('toolgate_approvals')
    .set({ decision: 'approved', approver: principal, decided_at: now, consumed: 1 })
    .where('call_id', '=', row.id)
    .where('decision', 'is', null)
    .executeTakeFirst();
  if (Number(taken.numUpdatedRows) === 0)
    return refusedIn(
      step,
      trx,
      approving,
      'not_awaiting',
      `the call is ${row.status}, not waiting for approval`,
    );
  const before =
    state === undefined ? record : (Object.freeze({ ...record, approval: state }) as ToolCallRecord);
  if (edit !== undefined) note('edited', editMessage(principal, edited as InputEdit), storeRecord(before));
  if (required > 1)
    note(
      'approved',
      `"${principal}" approved; no more approvals needed (${required} in all)`,
      storeRecord(before),
    );
  if (notes.length > 0) await ledger.recordEvents(trx, notes);
  const started = await keeper.moveIn(
    trx,
    { ...row, record: storeRecord(before) },
    edit === undefined
      ? { type: 'execute' }
      : { type: 'execute', edit: { input, edit: edited as InputEdit } },
    principal,
  );
  if (started === undefined || !isExecuting(started))
    throw new Error('the approved call could not be started'); // rolls the approval back
  return { decision: { ok: true, ...(required > 1 ? { left: 0 } : {}) }, started };
}

/** Refuses the approval, as an event in the audit trail that names who was refused. */
async function refusedIn(
  { keeper }: ApprovalStep,
  trx: Trx,
  { row, principal, via }: Approving,
  code: 'invalid_edit' | 'already_approved' | 'not_awaiting',
  message: string,
): Promise<ApprovalOutcome> {
  const decision = refused(code, message);
  await keeper.refuse(trx, row, principal, code, message, via);
  return { decision };
}

/**
 * Records a principal's approval of one input of a call that needs several approvers, and answers
 * who has approved that input, oldest first; `undefined` when this principal had approved it
 * already. An approver who approved another input (before an edit) now approves this one. Where
 * each earlier vote came from is read from the record (`earlier`), which wrote it with that vote.
 */
async function quorumVote(
  trx: Trx,
  callId: string,
  vote: ApprovalState['approvedBy'][number],
  hash: string,
  earlier: ApprovalState['approvedBy'],
): Promise<ApprovalState['approvedBy'] | undefined> {
  const { principal, at: now } = vote;
  const mine = await trx
    .selectFrom('toolgate_approvers')
    .select('input_hash')
    .where('call_id', '=', callId)
    .where('principal', '=', principal)
    .executeTakeFirst();
  if (mine?.input_hash === hash) return undefined;
  await trx
    .deleteFrom('toolgate_approvers')
    .where('call_id', '=', callId)
    .where('principal', '=', principal)
    .execute();
  await trx
    .insertInto('toolgate_approvers')
    .values({ call_id: callId, principal, input_hash: hash, at: now })
    .execute();
  const approvers = await trx
    .selectFrom('toolgate_approvers')
    .select(['principal', 'at'])
    .where('call_id', '=', callId)
    .where('input_hash', '=', hash)
    .orderBy('at')
    .orderBy('principal')
    .execute();
  return approvers.map(({ principal: by, at }) => {
    if (by === principal) return vote;
    const via = earlier.find((entry) => entry.principal === by && entry.at === Number(at))?.via;
    return { principal: by, at: Number(at), ...(via === undefined ? {} : { via }) };
  });
}

function editMessage(principal: string, edit: InputEdit): string {
  const values = edit.changes.map(
    (change) =>
      `${change.path || '(input)'}: ${JSON.stringify(change.from) ?? '(absent)'} → ${JSON.stringify(change.to) ?? '(absent)'}`,
  );
  return `"${principal}" changed the input before approving: ${values.join('; ')}`;
}
