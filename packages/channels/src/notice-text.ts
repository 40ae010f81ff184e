import type { ToolCallRecord } from '@toolgate/core';
import type { Notice } from '@toolgate/server';

/**
 * Who asks, in words: the principal, and the person it acts for when it said.
 *
 * @example
 * whoAsks({ principal: 'agent_7', onBehalfOf: 'alice' }); // 'agent_7 for alice'
 */
export function whoAsks(from: Notice['from']): string {
  return from.onBehalfOf === undefined ? from.principal : `${from.principal} for ${from.onBehalfOf}`;
}

/**
 * The call's input as a person reads it: indented JSON, whole.
 *
 * @example
 * inputText({ amount_cents: 500 }); // '{\n  "amount_cents": 500\n}'
 */
export function inputText(input: unknown): string {
  return JSON.stringify(input, null, 2) ?? 'undefined';
}

/**
 * The first line of a notice: what the person is told, with the tool's name.
 *
 * @example
 * headline(notice); // 'Approve wire?'
 */
export function headline(notice: Notice): string {
  const tool = notice.call.name;
  switch (notice.kind) {
    case 'asked':
      return `Approve ${tool}?`;
    case 'reminder':
      return `Reminder: approve ${tool}?`;
    case 'escalated':
      return `Escalated to you: approve ${tool}?`;
    case 'decided':
    case 'expired':
      return `${tool}: ${ending(notice.call).title}`;
  }
}

/**
 * How a call ended, or where it stands, in a title and a sentence that name who decided.
 *
 * @example
 * ending(call); // { title: 'Approved', sentence: 'Approved by manager_1 and finance_1; it ran.' }
 */
export function ending(call: ToolCallRecord): { title: string; sentence: string } {
  const approvers = (call.approval?.approvedBy ?? []).map((vote) => vote.principal);
  const by = approvers.length === 0 ? '' : ` by ${listOf(approvers)}`;
  switch (call.status) {
    case 'committed':
      return { title: 'Approved', sentence: `Approved${by}; it ran.` };
    case 'executing':
      return { title: 'Approved', sentence: `Approved${by}; it is running.` };
    case 'failed':
      return {
        title: 'Approved, then failed',
        sentence: `Approved${by}; it failed: ${call.reason.message}.`,
      };
    case 'cancelled':
      if (call.reason.code === 'approval_denied')
        return { title: 'Denied', sentence: `Denied: ${call.reason.message}. It will not run.` };
      if (call.reason.code === 'approval_expired')
        return { title: 'Expired', sentence: 'Nobody decided in time; it was cancelled and will not run.' };
      return { title: 'Cancelled', sentence: `Cancelled: ${call.reason.message}. It will not run.` };
    case 'rejected':
      return { title: 'Refused', sentence: `Refused: ${call.reason.message}. It will not run.` };
    default:
      return { title: 'Waiting', sentence: 'It still waits for a decision.' };
  }
}

/**
 * When an asked call expires, as an ISO 8601 time in UTC, if its tool set one.
 *
 * @example
 * expiresText(call); // '2026-12-07T14:00:00.000Z'
 */
export function expiresText(call: ToolCallRecord): string | undefined {
  const at = call.approval?.expiresAt;
  return at === undefined ? undefined : new Date(at).toISOString();
}

function listOf(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`;
}
