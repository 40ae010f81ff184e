import {
  messageOf,
  transition,
  type ApprovalState,
  type ToolCallRecord,
  type ToolDefinition,
} from '@toolgate/core';
import { storable } from '../faults/storable.ts';

/** The actor of a call refused because nobody could be asked to decide it, in the audit trail. */
export const APPROVERS_ACTOR = 'toolgate:approvers';

/** More principals than any approval asks of, and a record kept to a size a page can show. */
const MOST_ASKED = 100;

/**
 * What asking needs: each tool's `approvers` and quorum, and whether a requester may approve.
 *
 * @example
 * const ask = createAsking({ approversOf: (name, id) => tools.entry(name, id)?.tool.approvers, approvalsOf, selfApproval: 'forbid' });
 */
export interface AskingOptions {
  readonly approversOf: (name: string, id: string) => ToolDefinition['approvers'] | undefined;
  readonly approvalsOf: (name: string, id: string) => number;
  readonly selfApproval: 'forbid' | 'allow';
}

/**
 * A call about to wait for a person, as asking sees it: `record` is the wait the policy would
 * write, `previous` the validated call, `principal` who proposed it.
 *
 * @example
 * const call: AskedCall = { record: waiting, previous: validated, session: 'chat_1', principal: 'agent_7' };
 */
export interface AskedCall {
  readonly record: ToolCallRecord;
  readonly previous: ToolCallRecord;
  readonly session: string;
  readonly principal: string;
}

/**
 * Decides who is asked about a call that is about to wait for a person, in the transaction that
 * writes that wait: the same call, waiting for the principals its tool's `approvers` names (the
 * record's `approval.asked`), or, when nobody could be asked, the call rejected `unauthorized`.
 *
 * @example
 * const { record, actor } = await ask({ record: waiting, previous: validated, session: 'chat_1', principal: 'agent_7' });
 */
export type Ask = (call: AskedCall) => Promise<{ readonly record: ToolCallRecord; readonly actor?: string }>;

/**
 * Builds the asking step of a gate. A tool without `approvers` keeps its call as it is. An
 * `approvers` that throws, answers anything but a list of principals, or leaves fewer principals
 * than the call needs approvers (once the requester and the person it acts for are taken out,
 * under `selfApproval: 'forbid'`) rejects the call with a reason the model reads: a call never
 * waits for nobody.
 *
 * @example
 * const ask = createAsking(options);
 */
export function createAsking({ approversOf, approvalsOf, selfApproval }: AskingOptions): Ask {
  return async (call) => {
    const { record, previous, session, principal } = call;
    const approvers = approversOf(record.name, record.id);
    if (approvers === undefined || record.status !== 'awaiting_approval') return { record };
    const { onBehalfOf } = record;
    const refuse = (message: string) => {
      const rejected = transition(
        previous,
        { type: 'reject', reason: { code: 'unauthorized', message } },
        record.updatedAt,
      );
      // Where no rejection fits (a compensation), the call waits with nobody who may approve it.
      if (rejected === undefined) return { record: withAsked(record, [], principal, approvalsOf) };
      return { record: rejected, actor: APPROVERS_ACTOR };
    };
    let answer: unknown;
    try {
      answer = await approvers({
        id: record.id,
        name: record.name,
        input: record.input,
        principal,
        session,
        ...(onBehalfOf === undefined ? {} : { onBehalfOf }),
      });
    } catch (error) {
      return refuse(`nobody could be asked to approve this call: approvers threw: ${messageOf(error)}`);
    }
    const named = principalsIn(answer);
    if (typeof named === 'string')
      return refuse(`nobody could be asked to approve this call: approvers answered ${named}`);
    const asked =
      selfApproval === 'forbid'
        ? named.filter((asker) => asker !== principal && asker !== onBehalfOf)
        : named;
    const required = approvalsOf(record.name, record.id);
    if (asked.length < required) {
      const who = asked.length === 0 ? 'nobody' : `only ${asked.length}`;
      const besides =
        named.length > asked.length ? ' besides the requester, who may not approve their own call' : '';
      return refuse(
        `this call needs ${required} distinct approver${required === 1 ? '' : 's'}, and approvers named ${who}${besides}`,
      );
    }
    return { record: withAsked(record, asked, principal, approvalsOf) };
  };
}

function withAsked(
  record: ToolCallRecord,
  asked: readonly string[],
  principal: string,
  approvalsOf: AskingOptions['approvalsOf'],
): ToolCallRecord {
  const required = approvalsOf(record.name, record.id);
  const from: ApprovalState['from'] =
    record.onBehalfOf === undefined ? { principal } : { principal, onBehalfOf: record.onBehalfOf };
  const approval: ApprovalState = {
    required,
    approvedBy: [],
    left: required,
    ...(record.approval?.overBudget === undefined ? {} : { overBudget: record.approval.overBudget }),
    asked: Object.freeze([...asked]),
    from,
  };
  return Object.freeze({ ...record, approval });
}

/** The distinct principals of an answer, in its order, or what is wrong with it. */
function principalsIn(answer: unknown): readonly string[] | string {
  if (!Array.isArray(answer)) return `${describe(answer)}, not a list of principals`;
  const principals: string[] = [];
  for (const item of answer as unknown[]) {
    if (typeof item !== 'string' || item === '' || !storable(item))
      return `a list holding ${describe(item)}, which is not a principal`;
    if (!principals.includes(item)) principals.push(item);
  }
  if (principals.length === 0) return 'an empty list';
  if (principals.length > MOST_ASKED) return `${principals.length} principals, more than ${MOST_ASKED}`;
  return principals;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 80));
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'a list' : 'an object';
  return typeof value === 'function' ? 'a function' : (JSON.stringify(value) ?? typeof value);
}
