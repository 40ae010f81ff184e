import { createHash } from 'node:crypto';
import {
  createPending,
  isExecuting,
  transition,
  type CallEvent,
  type ExecutingCall,
} from '@toolgate/core/kit';
import { type CompensationLink, type ToolCallRecord, type ToolDefinition } from '@toolgate/core';
import { tampering } from '../ledger/chain/chain-check.ts';
import { refused, type Decision } from '../decision/decision.ts';
import { audit, forDecision, mayDecide, refuseIn } from '../gate/decisions.ts';
import type { GateParts } from '../gate/parts.ts';
import { textOf } from '../gate/settings.ts';
import { readRecord } from '../ledger/stored-record.ts';
import { annotate } from '../keeper/compensation-link.ts';
import { COMPENSATION, type CompensationInput } from './compensation-tool.ts';

type Refusal = Decision & { ok: false };

/**
 * Undoes a committed call by running its tool's `compensate` as a call of its own,
 * `${id}:compensate`, in the same session: claimed once (of two requests at once, one makes it),
 * sent to a person first if the tool needs approval (asked of the input the call ran with), leased
 * and recovered like any call of the tool's kind, audited. Its input is the call it undoes, that
 * call's output and the reason; its key is the call's key followed by `:compensate`. The original
 * record links to it (`compensation`), and learns how it ended and what it returned. Who may:
 * whoever `canApprove` allows. Only a committed call whose tool has `compensate`, once.
 *
 * @example
 * const decision = await compensate(parts, 'call_1', { principal: 'ops_1', reason: 'the customer returned it' });
 */
export async function compensate(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'tools' | 'keeper' | 'pipeline' | 'follower' | 'sessions'>,
  id: string,
  request: { readonly principal: string; readonly reason?: string },
): Promise<Decision> {
  const { ledger, keeper, pipeline, settings } = parts;
  const { principal } = request;
  const found = await forDecision(parts, id, principal);
  if ('ok' in found) return found;
  if (!(await mayDecide(parts, principal, found.info))) {
    await audit(parts, id, principal, 'forbidden', `"${principal}" may not compensate this call`);
    return refused('forbidden');
  }
  const { record } = found.info;
  const tool = parts.tools.entry(record.name, id)?.tool;
  const early = whyNot(record, tool);
  if (early !== undefined) {
    await audit(parts, id, principal, early.code, early.message);
    return early;
  }
  const reason = request.reason === undefined ? undefined : textOf(request.reason, '') || undefined;
  const asks = await needsApproval(tool as ToolDefinition, record.input, settings.onError);
  const made = await keeper.exclusive(id, () =>
    ledger.transaction(async (trx): Promise<{ decision: Decision; started?: ExecutingCall }> => {
      const row = await keeper.lock(trx, id);
      if (row === undefined) return { decision: refused('not_found') };
      const current = readRecord(row.record);
      const why = whyNot(current, tool);
      if (why !== undefined) return { decision: await refuseIn(parts, trx, row, principal, why) };
      const tampered = await tampering(trx, row);
      if (tampered !== undefined) {
        parts.settings.onError(new Error(`toolgate: call "${id}" was not compensated: ${tampered}`));
        const refusal = refused('tampered', `${tampered}; it was not compensated`) as Refusal;
        return { decision: await refuseIn(parts, trx, row, principal, refusal) };
      }
      const call = compensationCall(parts, current, principal, reason, asks);
      const wrote = await keeper.writeCall(
        trx,
        {
          session: row.session,
          owner: row.owner,
          proposalHash: createHash('sha256').update(`compensation\u0000${call.last.id}`).digest('hex'),
          moves: call.moves,
        },
        call.last,
        { key: `${row.idempotency_key}${COMPENSATION}`, admit: false },
      );
      // Written by another instance first: the call was being compensated already.
      if (wrote === undefined) throw new Error(`compensation "${call.last.id}" exists already`);
      const link: CompensationLink = {
        id: call.last.id,
        by: principal,
        ...(reason === undefined ? {} : { reason }),
        status: wrote.record.status,
      };
      await annotate(
        { ledger, trx, at: settings.clock.now() },
        row,
        { ...current, compensation: link },
        principal,
        'compensation',
        `"${principal}" asked to undo this call${reason === undefined ? '' : ` (${reason})`}: compensation call "${call.last.id}", ${wrote.record.status === 'awaiting_approval' ? 'waiting for approval' : 'running'}`,
      );
      if (!isExecuting(wrote.record)) return { decision: { ok: true } };
      keeper.claimed(wrote.record.id, {
        fence: wrote.fence,
        idempotencyKey: wrote.key,
        session: row.session,
        owner: row.owner,
      });
      return { decision: { ok: true }, started: wrote.record };
    }),
  );
  if (made.started !== undefined) {
    parts.follower.guard(made.started.id);
    pipeline.run(made.started, { actor: principal });
  }
  return made.decision;
}

/** Why a call cannot be compensated (now): not committed, no `compensate`, or compensated already. */
function whyNot(record: ToolCallRecord, tool: ToolDefinition | undefined): Refusal | undefined {
  if (record.status !== 'committed')
    return refused(
      'not_committed',
      `only a committed call can be compensated; this one is ${record.status}`,
    ) as Refusal;
  if (tool?.compensate === undefined)
    return refused(
      'no_compensate',
      `the tool "${record.name}" has no compensate, so its calls cannot be undone here`,
    ) as Refusal;
  if (record.compensation !== undefined)
    return refused(
      'already_compensated',
      `this call's compensation is "${record.compensation.id}" (${record.compensation.status}); a call is compensated once`,
    ) as Refusal;
  return undefined;
}

/**
 * Whether a compensation must wait for a person: as the tool's `needsApproval` says of the input
 * the call ran with. Anything but a clear `false` (a throw, another answer) asks a person.
 */
async function needsApproval(
  tool: ToolDefinition,
  input: unknown,
  onError: (error: unknown) => void,
): Promise<boolean> {
  const { needsApproval: asks } = tool;
  if (typeof asks !== 'function') return asks === true || (tool.approvals ?? 1) > 1;
  try {
    return (await asks(input)) !== false;
  } catch (error) {
    onError(error);
    return true;
  }
}

/** The compensation call's moves, from pending to waiting for a person or running. */
function compensationCall(
  parts: Pick<GateParts, 'settings'>,
  original: ToolCallRecord,
  principal: string,
  reason: string | undefined,
  asks: boolean,
): {
  moves: { from: ToolCallRecord | undefined; to: ToolCallRecord; actor: string }[];
  last: ToolCallRecord;
} {
  const at = parts.settings.clock.now();
  const pending = Object.freeze({
    ...createPending({
      id: `${original.id}${COMPENSATION}`,
      name: original.name,
      source: 'normalised',
      generatedId: false,
      turn: undefined,
      at,
    }),
    compensates: original.id,
  }) as ToolCallRecord;
  const input: CompensationInput = {
    call: original.id,
    output: original.output,
    ...(reason === undefined ? {} : { reason }),
  };
  const events: CallEvent[] = [
    { type: 'validate', input: Object.freeze(input) },
    asks ? { type: 'await_approval' } : { type: 'execute' },
  ];
  const moves: { from: ToolCallRecord | undefined; to: ToolCallRecord; actor: string }[] = [
    { from: undefined, to: pending, actor: principal },
  ];
  let last = pending;
  for (const event of events) {
    const next = transition(last, event, at);
    if (next === undefined) throw new Error(`a compensation could not move to ${event.type}`);
    moves.push({ from: last, to: next, actor: principal });
    last = next;
  }
  return { moves, last };
}
