import { canonicalJson } from '@toolgate/core/kit';
import { isTerminal, type ToolCallRecord } from '@toolgate/core';
import type { Transaction } from 'kysely';
import type { CallsTable, LedgerDatabase } from '../ledger/schema.ts';
import { tampering } from '../ledger/chain/chain-check.ts';
import { storable } from '../ledger/guards/storable.ts';
import { readRecord } from '../ledger/stored-record.ts';
import { decideApproval, type ApprovalOutcome } from '../policy/approval.ts';
import { checkEdit, type CheckedEdit } from '../policy/edit.ts';
import { refuseVote } from '../links/vote-refusal.ts';
import { checkedVia, type VoteVia } from '../decision/channel-reason.ts';
import { refused, type Decision, type RefusalCode } from '../decision/decision.ts';
import type { GateParts } from './parts.ts';
import type { CallInfo } from './server-gate.ts';
import { textOf } from './settings.ts';

// A person's decisions on a call (approve, deny, cancel): each one checked against who may see and
// decide the call, made in one transaction with the call's row locked, and audited when refused.

type Trx = Transaction<LedgerDatabase>;

/**
 * Reads a call for a decision and checks that the principal may see it: the call's row and what
 * `canApprove` is asked about, or the refusal (`forbidden` without a principal, `not_found` for a
 * call it may not see, audited). With `vote`, a principal the call asked, and the person it was
 * made for, see it too: they vote on it (or are told why they may not), and nothing else. A vote
 * a channel passed on (`via`) about a call the ledger does not hold is audited as an event of the
 * channel, since that call has no trail of its own.
 *
 * @example
 * const found = await forDecision(parts, id, principal);
 * if ('ok' in found) return found;
 */
export async function forDecision(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'keeper' | 'sessions'>,
  id: string,
  principal: unknown,
  vote = false,
  via?: VoteVia,
): Promise<{ row: CallsTable; info: CallInfo } | Decision> {
  const { ledger } = parts;
  if (typeof principal !== 'string' || principal === '')
    return refused('forbidden', 'no principal: only an authenticated user can decide a call');
  if (!storable(id)) return refused('not_found');
  const row = await ledger.read((db) =>
    db.selectFrom('toolgate_calls').selectAll().where('id', '=', id).executeTakeFirst(),
  );
  if (row === undefined) {
    if (via !== undefined)
      await refuseVote(parts, {
        channel: via.channel,
        code: 'not_found',
        message: `no call "${id}" is in the ledger`,
        callId: id,
        principal,
        ...(via.user === undefined ? {} : { user: via.user }),
      });
    return refused('not_found');
  }
  const record = readRecord(row.record);
  const concerned =
    vote && (record.approval?.asked?.includes(principal) === true || record.onBehalfOf === principal);
  if (!concerned && !(await parts.sessions.mayView(principal, row.session, row.owner))) {
    await audit(
      parts,
      id,
      principal,
      'forbidden',
      `"${principal}" may not see session "${row.session}"`,
      via,
    );
    return refused('not_found');
  }
  return { row, info: { record, session: row.session, owner: row.owner } };
}

/**
 * Writes a refusal of a request about a call into the audit trail, in a transaction of its own
 * (naming the channel a vote came through, when one passed it on).
 *
 * @example
 * await audit(parts, id, principal, 'forbidden', `"${principal}" may not approve this call`);
 */
export async function audit(
  parts: Pick<GateParts, 'ledger' | 'keeper'>,
  id: string,
  principal: string,
  code: RefusalCode,
  message: string,
  via?: VoteVia,
): Promise<void> {
  const { ledger, keeper } = parts;
  await ledger.transaction(async (trx) => {
    const row = await keeper.lock(trx, id);
    if (row !== undefined) await keeper.refuse(trx, row, principal, code, message, via);
  });
}

/**
 * Whether `canApprove` lets the principal decide the call; a `canApprove` that throws says no (and is reported).
 *
 * @example
 * if (!(await mayDecide(parts, principal, found.info))) return refused('forbidden');
 */
export async function mayDecide(
  parts: Pick<GateParts, 'settings'>,
  principal: string,
  info: CallInfo,
): Promise<boolean> {
  const { onError, canApprove } = parts.settings;
  try {
    return (await canApprove(principal, info)) === true;
  } catch (error) {
    onError(error);
    return false;
  }
}

/**
 * Why the principal may not approve or deny the call, or `undefined` when they may. A call of a
 * tool with `approvers` is decided only by the principals it asked (and a `canApprove` the app gave
 * must allow them too); under `selfApproval: 'forbid'` its requester and the person it acts for
 * may not approve it. Any other call is decided by `canApprove`.
 *
 * @example
 * const why = await whyNotDecide(parts, 'manager_1', found.info, 'approve');
 * if (why !== undefined) return refused('forbidden', why);
 */
export async function whyNotDecide(
  parts: Pick<GateParts, 'settings' | 'tools'>,
  principal: string,
  info: CallInfo,
  vote: 'approve' | 'deny',
): Promise<string | undefined> {
  const { record } = info;
  const approval = record.approval;
  const ruled =
    approval?.asked !== undefined || parts.tools.entry(record.name, record.id)?.tool.approvers !== undefined;
  const allowed = () => mayDecide(parts, principal, info);
  if (!ruled) return (await allowed()) ? undefined : `"${principal}" may not ${vote} this call`;
  const from = approval?.from;
  if (vote === 'approve' && parts.settings.selfApproval === 'forbid' && from !== undefined) {
    if (principal === from.principal)
      return `"${principal}" asked for this call and may not approve it: another person must`;
    if (principal === from.onBehalfOf)
      return `"${principal}" is the person this call was made for and may not approve it: another person must`;
  }
  if (approval?.asked?.includes(principal) !== true)
    return `"${principal}" was not asked to decide this call`;
  if (parts.settings.canApproveGiven && !(await allowed())) return `"${principal}" may not ${vote} this call`;
  return undefined;
}

/**
 * Refuses inside the transaction that found the reason, so the refusal is in the audit trail.
 *
 * @example
 * return refuseIn(parts, trx, row, principal, refused('settled') as Decision & { ok: false });
 */
export async function refuseIn(
  parts: Pick<GateParts, 'keeper'>,
  trx: Trx,
  row: CallsTable,
  principal: string,
  decision: Decision & { ok: false },
  via?: VoteVia,
): Promise<Decision> {
  const { keeper } = parts;
  await keeper.refuse(trx, row, principal, decision.code, decision.message, via);
  return decision;
}

/** Audits a vote refused `forbidden`; one about a call with approvers answers why, the others the standard sentence. */
async function forbid(
  parts: Pick<GateParts, 'ledger' | 'keeper'>,
  id: string,
  principal: string,
  info: CallInfo,
  why: string,
  via: VoteVia | undefined,
): Promise<Decision> {
  await audit(parts, id, principal, 'forbidden', why, via);
  return info.record.approval?.asked === undefined ? refused('forbidden') : refused('forbidden', why);
}

function notAwaiting(status: string): Decision & { ok: false } {
  return (
    isTerminal(status as ToolCallRecord['status'])
      ? refused('settled')
      : refused('not_awaiting', `the call is ${status}, not waiting for approval`)
  ) as Decision & { ok: false };
}

/**
 * Ends a call whose approval ran out: the approval is marked expired and the call cancelled with
 * `approval_expired`, in the caller's transaction.
 *
 * @example
 * await ledger.transaction(async (trx) => expire(parts, trx, await keeper.lock(trx, id), 'toolgate:expiry'));
 */
export async function expire(
  parts: Pick<GateParts, 'settings' | 'keeper'>,
  trx: Trx,
  row: CallsTable,
  actor: string,
): Promise<ToolCallRecord | undefined> {
  const { keeper } = parts;
  const { clock } = parts.settings;
  await trx
    .updateTable('toolgate_approvals')
    .set({ decision: 'expired', decided_at: clock.now() })
    .where('call_id', '=', row.id)
    .where('decision', 'is', null)
    .execute();
  return keeper.moveIn(
    trx,
    row,
    {
      type: 'cancel',
      reason: { code: 'approval_expired', message: 'the approval expired: nobody decided this call in time' },
    },
    actor,
  );
}

/**
 * What `approve` takes: who approves, the hash of the input they were shown, and, for an edit, the
 * input they want to run (and the tool they think they approve, when a client sends it).
 *
 * @example
 * const request: ApproveRequest = { principal: 'manager_1', inputHash, input: { ...call.input, amount_cents: 2000 } };
 */
export interface ApproveRequest {
  readonly principal: string;
  readonly inputHash: string;
  readonly input?: unknown;
  readonly name?: unknown;
  /** The channel the vote came through, named in the audit of a refusal. */
  readonly via?: VoteVia;
}

/**
 * Approves a call that awaits approval, if `inputHash` is the hash of the input it holds: on the
 * last approval it needs, the approval is consumed in the transaction that starts the execution,
 * so of two approvals one wins. An edit is checked as a proposal would be before anything moves.
 *
 * @example
 * const decision = await approve(parts, 'call_1', { principal: 'user_42', inputHash });
 */
export async function approve(
  parts: Pick<
    GateParts,
    'settings' | 'ledger' | 'tools' | 'keeper' | 'pipeline' | 'follower' | 'sessions' | 'policy'
  >,
  id: string,
  request: ApproveRequest,
): Promise<Decision> {
  const { ledger, keeper, pipeline } = parts;
  const { clock } = parts.settings;
  const { principal, inputHash } = request;
  const via = checkedVia('serverGate.approve', request.via);
  const found = await forDecision(parts, id, principal, true, via);
  if ('ok' in found) return found;
  const why = await whyNotDecide(parts, principal, found.info, 'approve');
  if (why !== undefined) return forbid(parts, id, principal, found.info, why, via);
  let edit: Extract<CheckedEdit, { ok: true }> | undefined;
  if (request.input !== undefined || request.name !== undefined) {
    const { record } = found.info;
    const checked = await checkEdit(
      parts.tools.entry(record.name, id),
      record,
      { input: request.input ?? record.input, name: request.name },
      parts.settings.limits,
    );
    if (!checked.ok) {
      await audit(parts, id, principal, 'invalid_edit', checked.message, via);
      return refused('invalid_edit', checked.message, checked.issues);
    }
    // An edit that changes nothing is a plain approval.
    if (checked.changes.length > 0 || canonicalJson(checked.input) !== canonicalJson(record.input))
      edit = checked;
  }
  const outcome = await keeper.exclusive(id, () =>
    ledger.transaction(async (trx): Promise<ApprovalOutcome> => {
      const row = await keeper.lock(trx, id);
      if (row === undefined) return { decision: refused('not_found') };
      if (row.status !== 'awaiting_approval')
        return { decision: await refuseIn(parts, trx, row, principal, notAwaiting(row.status), via) };
      const approval = await trx
        .selectFrom('toolgate_approvals')
        .selectAll()
        .where('call_id', '=', id)
        .executeTakeFirst();
      if (approval === undefined || approval.decision !== null)
        return { decision: await refuseIn(parts, trx, row, principal, notAwaiting(row.status), via) };
      if (clock.now() >= approval.expires_at) {
        await keeper.refuse(trx, row, principal, 'expired', 'the approval came after it had expired', via);
        await expire(parts, trx, row, principal);
        return { decision: refused('expired') };
      }
      const stale = refused('stale') as Decision & { ok: false };
      if (typeof inputHash !== 'string' || inputHash !== approval.input_hash)
        return { decision: await refuseIn(parts, trx, row, principal, stale, via) };
      // The edit was checked against the record read before this transaction: it must still be the one held.
      if (edit !== undefined && row.record !== found.row.record)
        return { decision: await refuseIn(parts, trx, row, principal, stale, via) };
      // What runs is what the audit trail covers: a row changed behind the gate's back is refused.
      const tampered = await tampering(trx, row, approval.input_hash);
      if (tampered !== undefined) {
        parts.settings.onError(new Error(`toolgate: call "${id}" was not run: ${tampered}`));
        return {
          decision: await refuseIn(
            parts,
            trx,
            row,
            principal,
            refused('tampered', `${tampered}; it was not run`) as Decision & { ok: false },
            via,
          ),
        };
      }
      return decideApproval(parts.policy, trx, {
        row,
        approval,
        principal,
        ...(edit === undefined ? {} : { edit }),
        ...(via === undefined ? {} : { via }),
      });
    }),
  );
  if (outcome.started !== undefined) {
    parts.follower.guard(id);
    pipeline.run(outcome.started, { actor: principal });
  }
  return outcome.decision;
}

/**
 * Cancels a call that awaits approval with `approval_denied`, in the principal's name.
 *
 * @example
 * const decision = await deny(parts, 'call_1', { principal: 'user_42', reason: 'wrong account' });
 */
export async function deny(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'tools' | 'keeper' | 'sessions'>,
  id: string,
  request: { readonly principal: string; readonly reason?: string; readonly via?: VoteVia },
): Promise<Decision> {
  const { principal, reason } = request;
  const via = checkedVia('serverGate.deny', request.via);
  const { ledger, keeper } = parts;
  const { clock } = parts.settings;
  const found = await forDecision(parts, id, principal, true, via);
  if ('ok' in found) return found;
  const why = await whyNotDecide(parts, principal, found.info, 'deny');
  if (why !== undefined) return forbid(parts, id, principal, found.info, why, via);
  return keeper.exclusive(id, () =>
    ledger.transaction(async (trx) => {
      const row = await keeper.lock(trx, id);
      if (row === undefined) return refused('not_found');
      if (row.status !== 'awaiting_approval')
        return refuseIn(parts, trx, row, principal, notAwaiting(row.status), via);
      const approval = await trx
        .selectFrom('toolgate_approvals')
        .selectAll()
        .where('call_id', '=', id)
        .executeTakeFirst();
      if (approval !== undefined && approval.decision === null && clock.now() >= approval.expires_at) {
        await keeper.refuse(
          trx,
          row,
          principal,
          'expired',
          'the denial came after the approval had expired',
          via,
        );
        await expire(parts, trx, row, principal);
        return refused('expired');
      }
      await trx
        .updateTable('toolgate_approvals')
        .set({ decision: 'denied', approver: principal, decided_at: clock.now() })
        .where('call_id', '=', id)
        .where('decision', 'is', null)
        .execute();
      const next = await keeper.moveIn(
        trx,
        row,
        {
          type: 'cancel',
          reason: { code: 'approval_denied', message: textOf(reason, 'a person denied this call') },
        },
        principal,
      );
      if (next === undefined)
        return refuseIn(parts, trx, row, principal, refused('not_awaiting') as Decision & { ok: false }, via);
      return { ok: true } as const;
    }),
  );
}

/**
 * Cancels a call that has not ended: a draft in memory, a call waiting for a person, or one that
 * runs (its tool is stopped here first, and its result dropped).
 *
 * @example
 * const decision = await cancel(parts, 'call_1', { principal: 'user_42' });
 */
export async function cancel(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'keeper' | 'pipeline' | 'sessions'>,
  id: string,
  { principal, reason }: { readonly principal: string; readonly reason?: string },
): Promise<Decision> {
  const { ledger, keeper, pipeline } = parts;
  const { clock } = parts.settings;
  const message = textOf(reason, 'the user cancelled this call');
  const draft = keeper.drafts.get(id);
  if (draft !== undefined) {
    if (!(await parts.sessions.mayView(principal, draft.session, draft.owner))) return refused('not_found');
    const next = await keeper.move(
      id,
      { type: 'cancel', reason: { code: 'user_cancelled', message } },
      { actor: principal },
    );
    if (next !== undefined) return { ok: true };
  }
  const claim = keeper.claims.get(id);
  if (
    claim !== undefined &&
    pipeline.running(id) &&
    (await parts.sessions.mayView(principal, claim.session, claim.owner))
  ) {
    // Stop the tool here first, before reading the call: its result is dropped, and a transaction
    // it holds is rolled back (on SQLite, that transaction holds the only connection).
    await pipeline.stop(id, new DOMException(message, 'AbortError'));
  }
  const found = await forDecision(parts, id, principal);
  if ('ok' in found) return found;
  return keeper
    .exclusive(id, () =>
      ledger.transaction(async (trx) => {
        const row = await keeper.lock(trx, id);
        if (row === undefined) return refused('not_found');
        if (isTerminal(row.status))
          return refuseIn(parts, trx, row, principal, refused('settled') as Decision & { ok: false });
        // Cancelling would tell the model nothing happened, and nobody knows that.
        if (row.status === 'executing' && readRecord(row.record).doubt !== undefined)
          return refuseIn(parts, trx, row, principal, refused('in_doubt') as Decision & { ok: false });
        if (row.status === 'awaiting_approval') {
          await trx
            .updateTable('toolgate_approvals')
            .set({ decision: 'cancelled', approver: principal, decided_at: clock.now() })
            .where('call_id', '=', id)
            .where('decision', 'is', null)
            .execute();
        }
        const next = await keeper.moveIn(
          trx,
          row,
          { type: 'cancel', reason: { code: 'user_cancelled', message } },
          principal,
        );
        if (next === undefined)
          return refuseIn(parts, trx, row, principal, refused('settled') as Decision & { ok: false });
        return { ok: true } as const;
      }),
    )
    .then((decision) => {
      if (decision.ok) keeper.release(id);
      return decision;
    });
}
