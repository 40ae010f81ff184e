import type { ApproversCall, Clock, ToolCallRecord, ToolDefinition } from '@toolgate/core';
import { APPROVERS_TIMEOUT_MS, namedPrincipals } from '../policy/approvers.ts';

/**
 * Who an escalation step asks about a call, as its tool's `escalate[step].approvers` names them
 * (called with the call, under the tool's `timeoutMs`, 30 s if unset), or why nobody: the step is
 * gone (the tools were replaced), or its function threw, was late or answered something else.
 * Asked outside any transaction, under the timer's claim.
 *
 * @example
 * const named = await escalationApprovers(tool, 0, { record, session: row.session }, clock);
 */
export async function escalationApprovers(
  tool: ToolDefinition | undefined,
  step: number,
  call: { readonly record: ToolCallRecord; readonly session: string; readonly owner: string },
  clock: Clock,
): Promise<readonly string[] | string> {
  const found = tool?.escalate?.[step];
  if (found === undefined) return `the tool no longer has escalation step ${step}`;
  const { approvers } = found;
  const { record } = call;
  const asking: ApproversCall = {
    id: record.id,
    name: record.name,
    input: record.input,
    principal: record.approval?.from?.principal ?? call.owner,
    session: call.session,
    ...(record.onBehalfOf === undefined ? {} : { onBehalfOf: record.onBehalfOf }),
  };
  const named = await namedPrincipals(
    () => (typeof approvers === 'function' ? approvers(asking) : approvers),
    tool?.timeoutMs ?? APPROVERS_TIMEOUT_MS,
    clock,
  );
  return typeof named === 'string' ? `approvers of escalation step ${step} ${named}` : named;
}
