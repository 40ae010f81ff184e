import type { ToolCallRecord } from '@toolgate/core';
import { stillAsked } from '../inbox/asks.ts';

/**
 * Everyone asked to decide a call: the principals its tool's `approvers` named (and escalations
 * added), or, for a tool without `approvers`, the session's owner (who decides it by default).
 *
 * @example
 * const everyone = askedOf(record, row.owner);
 */
export function askedOf(record: ToolCallRecord, owner: string): readonly string[] {
  return record.approval?.asked ?? [owner];
}

/**
 * Those asked who have not decided yet: an approver of a quorum who approved is no longer asked.
 *
 * @example
 * const toRemind = undecided(record, row.owner);
 */
export function undecided(record: ToolCallRecord, owner: string): readonly string[] {
  return record.approval?.asked === undefined ? [owner] : stillAsked(record);
}
