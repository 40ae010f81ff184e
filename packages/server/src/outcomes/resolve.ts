import { copyValue, isExecuting, messageOf, type ExecutingCall, type ToolEntry } from '@toolgate/core/kit';
import { isTerminal, type Issue } from '@toolgate/core';
import { tampering } from '../ledger/chain/chain-check.ts';
import { refused, type Decision } from '../decision/decision.ts';
import { audit, forDecision, mayDecide, refuseIn } from '../gate/decisions.ts';
import type { GateParts } from '../gate/parts.ts';
import { textOf } from '../gate/settings.ts';
import { readRecord } from '../ledger/stored-record.ts';

/**
 * What a person says about a call held in doubt, once they have checked the system it called:
 * its effect happened (`committed`, with the output it had, checked against the tool's
 * `outputSchema`), or it never did (`not_executed`: the call runs again once, with the same
 * idempotency key). `note` says how they know; it goes into the audit trail and the record.
 *
 * @example
 * const request: ResolveRequest = { principal: 'ops_1', outcome: 'committed', output: { charge: 'ch_42' }, note: 'ch_42 is in the dashboard' };
 */
export interface ResolveRequest {
  readonly principal: string;
  readonly outcome: 'committed' | 'not_executed';
  readonly output?: unknown;
  readonly note?: string;
}

type Refusal = Decision & { ok: false };

/**
 * Settles a call held in doubt on a person's word. Who may: whoever `canApprove` allows (others are
 * refused `forbidden`, audited). Only a held call is settled (`not_in_doubt` otherwise; of two at
 * once, one wins); an output the tool's schema refuses is refused `invalid_output` and the call
 * stays held. The person and their note are in the audit trail; a committed call's record carries
 * them as its `evidence`; a call run again is claimed by this gate and run with its key.
 *
 * @example
 * const decision = await resolve(parts, 'call_1', { principal: 'ops_1', outcome: 'not_executed', note: 'no charge under that key' });
 */
export async function resolve(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'tools' | 'keeper' | 'pipeline' | 'follower' | 'sessions'>,
  id: string,
  request: ResolveRequest,
): Promise<Decision> {
  const { ledger, keeper, pipeline } = parts;
  const { principal, outcome } = request;
  if (outcome !== 'committed' && outcome !== 'not_executed')
    throw new TypeError(
      `serverGate.resolve: \`outcome\` must be 'committed' or 'not_executed' (got ${JSON.stringify(outcome) ?? String(outcome)}).`,
    );
  const found = await forDecision(parts, id, principal);
  if ('ok' in found) return found;
  if (!(await mayDecide(parts, principal, found.info))) {
    await audit(parts, id, principal, 'forbidden', `"${principal}" may not settle this call`);
    return refused('forbidden');
  }
  const note = request.note === undefined ? undefined : textOf(request.note, '') || undefined;
  let output: unknown;
  if (outcome === 'committed') {
    const checked = await checkOutput(parts, parts.tools.entry(found.info.record.name, id), request.output);
    if (!checked.ok) {
      await audit(parts, id, principal, 'invalid_output', checked.message);
      return refused('invalid_output', checked.message, checked.issues);
    }
    output = checked.output;
  }
  const said =
    outcome === 'committed'
      ? 'its effect happened'
      : 'its effect never happened; it runs again once, with the same idempotency key';
  const settled = await keeper.exclusive(id, () =>
    ledger.transaction(async (trx): Promise<{ decision: Decision; started?: ExecutingCall }> => {
      const row = await keeper.lock(trx, id);
      if (row === undefined) return { decision: refused('not_found') };
      const current = readRecord(row.record);
      if (current.status !== 'executing' || current.doubt === undefined) {
        const why = isTerminal(current.status)
          ? refused('settled')
          : refused(
              'not_in_doubt',
              `the call is ${current.status} and not held in doubt; only a held call can be settled`,
            );
        return { decision: await refuseIn(parts, trx, row, principal, why as Refusal) };
      }
      const tampered = await tampering(trx, row);
      if (tampered !== undefined) {
        parts.settings.onError(new Error(`toolgate: call "${id}" was not settled: ${tampered}`));
        const why = refused('tampered', `${tampered}; it was not settled`) as Refusal;
        return { decision: await refuseIn(parts, trx, row, principal, why) };
      }
      await keeper.refuse(
        trx,
        row,
        principal,
        'resolved',
        `"${principal}" checked and settled it: ${said}${note === undefined ? '' : ` (${note})`}`,
      );
      const evidence = { source: 'person' as const, by: principal, ...(note === undefined ? {} : { note }) };
      const next = await keeper.moveIn(
        trx,
        row,
        outcome === 'committed' ? { type: 'commit', output, evidence } : { type: 'rerun' },
        principal,
        { unfenced: true },
      );
      if (next === undefined) throw new Error(`call "${id}" could not be settled`); // rolls the note back
      return { decision: { ok: true }, ...(isExecuting(next) ? { started: next } : {}) };
    }),
  );
  if (settled.started !== undefined) {
    parts.follower.guard(id);
    pipeline.run(settled.started, { actor: principal });
  }
  return settled.decision;
}

/**
 * The output a person gave, as a committed call would keep it: a JSON value within the gate's
 * limits, passed by the tool's `outputSchema` when it has one (the value the schema answers).
 */
async function checkOutput(
  parts: Pick<GateParts, 'settings'>,
  entry: ToolEntry | undefined,
  given: unknown,
): Promise<{ ok: true; output: unknown } | { ok: false; message: string; issues?: readonly Issue[] }> {
  if (given === undefined && entry?.validateOutput === undefined) return { ok: true, output: undefined };
  const copied = copyValue(given, parts.settings.limits);
  if (copied.kind !== 'ok')
    return { ok: false, message: `the output given is not a JSON value this gate accepts (${copied.kind})` };
  if (entry?.validateOutput === undefined) return { ok: true, output: copied.value };
  let verdict: { ok?: unknown; value?: unknown; issues?: unknown };
  try {
    verdict = await entry.validateOutput(copied.value);
  } catch (error) {
    return { ok: false, message: `the tool's output schema threw on the output given: ${messageOf(error)}` };
  }
  if (verdict.ok === true && 'value' in verdict) return { ok: true, output: verdict.value };
  const issues = Array.isArray(verdict.issues) ? (verdict.issues as Issue[]) : [];
  const lines = issues.map((issue) => `${issue.path || '(output)'}: ${issue.message}`).join('; ');
  return {
    ok: false,
    message: `the output given does not match the tool's output schema${lines === '' ? '' : `: ${lines}`}; the call stays held`,
    issues,
  };
}
