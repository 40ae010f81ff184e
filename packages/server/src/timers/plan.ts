import type { ApprovalState, ToolCallRecord, ToolDefinition } from '@toolgate/core';
import type { TimerKind } from '../ledger/schema.ts';

/**
 * One thing due while a call waits for a person: a reminder, an escalation step (by its index in
 * the tool's `escalate`) or the expiry, at `dueAt`.
 *
 * @example
 * const due: PlannedTimer = { kind: 'expiry', step: 0, dueAt: waitingSince + 86_400_000 };
 */
export interface PlannedTimer {
  readonly kind: TimerKind;
  readonly step: number;
  readonly dueAt: number;
}

/**
 * What a call of `tool` that began to wait at `since` has due: a reminder after `remindAfterMs`,
 * each escalation step after its `afterMs`, and the expiry after the tool's `approvalTtlMs` (the
 * gate's otherwise). Steps due at or after the expiry are left out: the call has ended by then.
 *
 * @example
 * const timers = timersOf(tool, call.updatedAt, settings.approvalTtlMs);
 */
export function timersOf(
  tool: ToolDefinition | undefined,
  since: number,
  gateTtlMs: number,
): readonly PlannedTimer[] {
  const expiresAt = since + (tool?.approvalTtlMs ?? gateTtlMs);
  const timers: PlannedTimer[] = [];
  if (tool?.remindAfterMs !== undefined)
    timers.push({ kind: 'reminder', step: 0, dueAt: since + tool.remindAfterMs });
  (tool?.escalate ?? []).forEach((step, index) =>
    timers.push({ kind: 'escalation', step: index, dueAt: since + step.afterMs }),
  );
  return [
    ...timers.filter((timer) => timer.dueAt < expiresAt),
    { kind: 'expiry', step: 0, dueAt: expiresAt },
  ];
}

/** Whether a tool says anything about time while its calls wait (and its records show when). */
export const timed = (tool: ToolDefinition | undefined): boolean =>
  tool?.remindAfterMs !== undefined || tool?.escalate !== undefined || tool?.approvalTtlMs !== undefined;

/**
 * A record about to wait for a person, with when it escalates next and when it expires, for a
 * tool that sets its own times; other records as they are.
 *
 * @example
 * const waiting = withTimes(record, tool, settings.approvalTtlMs);
 */
export function withTimes(
  record: ToolCallRecord,
  tool: ToolDefinition | undefined,
  gateTtlMs: number,
): ToolCallRecord {
  if (record.status !== 'awaiting_approval' || !timed(tool)) return record;
  const timers = timersOf(tool, record.updatedAt, gateTtlMs);
  const approval: ApprovalState = {
    ...(record.approval ?? { required: 1, approvedBy: [], left: 1 }),
    ...nextEscalation(timers, -1),
    expiresAt: timers[timers.length - 1]?.dueAt as number,
  };
  return Object.freeze({ ...record, approval });
}

/**
 * `{ escalatesAt }` of the first escalation step after `step` that comes before the expiry, or
 * nothing.
 *
 * @example
 * const next = nextEscalation(timersOf(tool, since, ttl), 0);
 */
export function nextEscalation(
  timers: readonly PlannedTimer[],
  step: number,
): { readonly escalatesAt?: number } {
  const next = timers.find((timer) => timer.kind === 'escalation' && timer.step > step);
  return next === undefined ? {} : { escalatesAt: next.dueAt };
}

/**
 * Checks the times of each tool when a gate is created (or its tools replaced): each a positive
 * number of milliseconds, and an escalation only on a tool whose `approvers` says who is asked.
 * Throws a `TypeError` naming the tool and the option.
 *
 * @example
 * checkTimes(options.tools, 'createServerGate');
 */
export function checkTimes(tools: readonly ToolDefinition[], where: string): void {
  for (const tool of tools) {
    const at = `${where}: tool "${tool.name}"`;
    for (const name of ['remindAfterMs', 'approvalTtlMs'] as const) {
      const value = tool[name];
      if (value !== undefined && !positive(value))
        throw new TypeError(
          `${at}: \`${name}\` must be a positive number of milliseconds (got ${String(value)}).`,
        );
    }
    if (tool.escalate === undefined) continue;
    if (!Array.isArray(tool.escalate))
      throw new TypeError(`${at}: \`escalate\` must be a list of { afterMs, approvers } steps.`);
    if (tool.approvers === undefined)
      throw new TypeError(
        `${at}: \`escalate\` asks more principals after a while, so the tool needs \`approvers\` to say who is asked first.`,
      );
    tool.escalate.forEach((step: unknown, index: number) => {
      const { afterMs, approvers } = (step ?? {}) as { afterMs?: unknown; approvers?: unknown };
      if (!positive(afterMs))
        throw new TypeError(
          `${at}: \`escalate[${index}].afterMs\` must be a positive number of milliseconds after the call began to wait (got ${String(afterMs)}).`,
        );
      if (typeof approvers !== 'function' && !Array.isArray(approvers))
        throw new TypeError(
          `${at}: \`escalate[${index}].approvers\` must be a list of principals or a function of the call that answers one.`,
        );
    });
  }
}

function positive(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}
