import type { ToolCallRecord } from '@toolgate/core';
import type { Transaction } from 'kysely';
import { expire } from '../gate/decisions.ts';
import { writeAsks } from '../inbox/asks.ts';
import type { GateParts } from '../gate/parts.ts';
import type { NewLedgerEvent, WaitNote } from '../ledger/ledger.ts';
import type { CallsTable, LedgerDatabase, TimerKind } from '../ledger/schema.ts';
import { readRecord, storeRecord } from '../ledger/stored-record.ts';
import { askedOf, undecided } from './asked.ts';
import { escalationApprovers } from './escalation.ts';
import { finishTimer, type ClaimedTimer } from './timer-rows.ts';

type Trx = Transaction<LedgerDatabase>;

/** The actor of reminders, escalations and expiries in the audit trail. */
export const TIMER_ACTOR = 'toolgate:timers';

/**
 * What a timer did in its transaction, for what follows it there (the notices): who was reminded
 * or newly asked, and the call as it then stood.
 *
 * @example
 * const onFired: OnFired = async (trx, fired) => writeNotices(trx, fired);
 */
export type OnFired = (
  trx: Trx,
  fired: {
    readonly kind: 'reminder' | 'escalation';
    /** The escalation step that fired; 0 for a reminder. */
    readonly step: number;
    readonly record: ToolCallRecord;
    readonly session: string;
    readonly owner: string;
    readonly to: readonly string[];
  },
) => Promise<void>;

class LostClaim extends Error {}

/**
 * Does what a claimed timer is due for, in one transaction with the call's row locked, once: the
 * reminder (an event naming who is still asked), the escalation (the principals its step names
 * join `approval.asked`; an event with the new record) or the expiry (the call ends `cancelled` /
 * `approval_expired`). A call no longer waiting has its timer marked cancelled. An escalation
 * whose `approvers` throws, is late or names nobody leaves the call waiting for those already
 * asked: the failure is an `escalation_failed` event, and that step is done (not asked again).
 * Answers what fired, or `undefined` when nothing did (the claim passed to another process).
 *
 * @example
 * const fired = await fireTimer(parts, claimed);
 */
export async function fireTimer(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'tools' | 'keeper'>,
  claimed: ClaimedTimer,
  onFired?: OnFired,
): Promise<TimerKind | undefined> {
  const { ledger, keeper, tools } = parts;
  const { clock } = parts.settings;
  const id = claimed.call_id;
  let named: readonly string[] | string | undefined;
  if (claimed.kind === 'escalation') {
    const found = await keeper.read(id);
    if (found?.record.status === 'awaiting_approval')
      named = await escalationApprovers(tools.entry(found.record.name, id)?.tool, claimed.step, found, clock);
  }
  try {
    return await keeper.exclusive(id, () =>
      ledger.transaction(async (trx) => {
        const row = await keeper.lock(trx, id);
        const waiting = row?.status === 'awaiting_approval';
        const failed = claimed.kind === 'escalation' && typeof named !== 'object';
        const outcome = !waiting ? 'cancelled' : failed ? 'failed' : 'fired';
        if (!(await finishTimer(trx, claimed, outcome, clock.now()))) throw new LostClaim();
        if (row === undefined || !waiting) return undefined;
        if (claimed.kind === 'expiry') {
          await expire(parts, trx, row, TIMER_ACTOR);
          return 'expiry';
        }
        const record = readRecord(row.record);
        if (claimed.kind === 'reminder') {
          const to = undecided(record, row.owner);
          await note(
            parts,
            trx,
            row,
            'reminded',
            `reminded ${list(to)}: the call still waits for a decision`,
          );
          await onFired?.(trx, {
            kind: 'reminder',
            step: 0,
            record,
            session: row.session,
            owner: row.owner,
            to,
          });
          return 'reminder';
        }
        if (typeof named !== 'object') {
          // Fails closed: those asked before still decide; this step is done and is not tried again.
          const why = named ?? 'the call was not waiting when it was due';
          await note(parts, trx, row, 'escalation_failed', `nobody more was asked: ${why}`);
          parts.settings.onError(new Error(`toolgate: call "${id}" was not escalated: ${why}`));
          return 'escalation';
        }
        const escalated = await escalate(parts, trx, row, record, claimed.step, named);
        await onFired?.(trx, {
          kind: 'escalation',
          step: claimed.step,
          record: escalated.record,
          session: row.session,
          owner: row.owner,
          to: escalated.added,
        });
        return 'escalation';
      }),
    );
  } catch (error) {
    if (error instanceof LostClaim) return undefined;
    throw error;
  }
}

/** Adds the principals an escalation named to those asked (not the requester, under `selfApproval: 'forbid'`). */
async function escalate(
  parts: Pick<GateParts, 'settings' | 'ledger'>,
  trx: Trx,
  row: CallsTable,
  record: ToolCallRecord,
  step: number,
  named: readonly string[],
): Promise<{ readonly record: ToolCallRecord; readonly added: readonly string[] }> {
  const { clock, selfApproval } = parts.settings;
  const now = clock.now();
  const asked = askedOf(record, row.owner);
  const from = record.approval?.from;
  const added = named.filter(
    (principal) =>
      !asked.includes(principal) &&
      !(selfApproval === 'forbid' && (principal === from?.principal || principal === from?.onBehalfOf)),
  );
  const later = await trx
    .selectFrom('toolgate_timers')
    .select('due_at')
    .where('call_id', '=', row.id)
    .where('kind', '=', 'escalation')
    .where('step', '>', step)
    .where('done_at', 'is', null)
    .orderBy('step')
    .limit(1)
    .executeTakeFirst();
  const { escalatesAt: _passed, ...approval } = record.approval ?? { required: 1, approvedBy: [], left: 1 };
  const next = Object.freeze({
    ...record,
    updatedAt: now,
    approval: Object.freeze({
      ...approval,
      asked: Object.freeze([...asked, ...added]),
      ...(later === undefined ? {} : { escalatesAt: later.due_at }),
    }),
  }) as ToolCallRecord;
  const stored = storeRecord(next);
  const updated = await trx
    .updateTable('toolgate_calls')
    .set({ record: stored, version: row.version + 1, updated_at: now })
    .where('id', '=', row.id)
    .where('version', '=', row.version)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) throw new Error(`call "${row.id}" moved while it was escalated`);
  const message =
    added.length === 0
      ? `escalation step ${step} named nobody who was not asked already`
      : `asked ${list(added)} too, as nobody decided in time (${list(asked)} may still decide)`;
  await note(parts, trx, row, 'escalated', message, stored);
  await writeAsks(trx, row.id, added, now);
  return { record: next, added };
}

async function note(
  parts: Pick<GateParts, 'settings' | 'ledger'>,
  trx: Trx,
  row: CallsTable,
  code: WaitNote,
  message: string,
  record?: string,
): Promise<void> {
  const event: NewLedgerEvent = {
    callId: row.id,
    session: row.session,
    from: row.status,
    to: row.status,
    actor: TIMER_ACTOR,
    at: parts.settings.clock.now(),
    reason: { code, message },
    ...(record === undefined ? {} : { record }),
  };
  await parts.ledger.recordEvents(trx, [event]);
}

const list = (principals: readonly string[]): string =>
  principals.length === 0 ? 'nobody' : principals.map((principal) => JSON.stringify(principal)).join(', ');
