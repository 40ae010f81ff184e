import type { ToolCallRecord } from '@toolgate/core';

/** When the channel tests' calls were made and last moved. */
export const NOW = 1_767_225_600_000;

/** A wire call `w1` waiting for a person, with the given input (and any field changed). */
export function waitingCall(input: unknown, extra: Partial<ToolCallRecord> = {}): ToolCallRecord {
  return {
    id: 'w1',
    name: 'wire',
    source: 'json',
    generatedId: false,
    turn: undefined,
    createdAt: NOW,
    updatedAt: NOW,
    history: [],
    repairs: undefined,
    evicted: false,
    status: 'awaiting_approval',
    input,
    output: undefined,
    reason: undefined,
    preview: undefined,
    ...extra,
  } as ToolCallRecord;
}
