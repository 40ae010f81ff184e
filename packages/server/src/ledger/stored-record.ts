import type { ToolCallRecord } from '@toolgate/core';

/**
 * A record as the ledger stores it: JSON, which drops keys whose value is `undefined`.
 *
 * @example
 * const text = storeRecord(call);
 */
export function storeRecord(record: ToolCallRecord): string {
  // A move stores its record twice (the call's row and its event), and records are frozen: one
  // serialisation serves both.
  if (!Object.isFrozen(record)) return JSON.stringify(record);
  let text = stored.get(record);
  if (text === undefined) stored.set(record, (text = JSON.stringify(record)));
  return text;
}

const stored = new WeakMap<ToolCallRecord, string>();

/**
 * A stored record read back with every key a record has (unset ones `undefined`), in the order
 * core builds them, so that records from the ledger look exactly like records made in memory.
 *
 * @example
 * const call = readRecord(row.record);
 */
export function readRecord(text: string): ToolCallRecord {
  const stored = JSON.parse(text) as Partial<Record<keyof ToolCallRecord, unknown>>;
  return {
    id: stored.id,
    name: stored.name,
    source: stored.source,
    generatedId: stored.generatedId ?? false,
    turn: stored.turn,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
    status: stored.status,
    history: stored.history ?? [],
    input: stored.input,
    output: stored.output,
    reason: stored.reason,
    preview: stored.preview,
    repairs: stored.repairs,
    evicted: false,
    ...(stored.approval === undefined ? {} : { approval: stored.approval }),
    ...(stored.onBehalfOf === undefined ? {} : { onBehalfOf: stored.onBehalfOf }),
    ...(stored.edit === undefined ? {} : { edit: stored.edit }),
    ...(stored.doubt === undefined ? {} : { doubt: stored.doubt }),
    ...(stored.attempt === undefined ? {} : { attempt: stored.attempt }),
    ...(stored.evidence === undefined ? {} : { evidence: stored.evidence }),
    ...(stored.compensation === undefined ? {} : { compensation: stored.compensation }),
    ...(stored.compensates === undefined ? {} : { compensates: stored.compensates }),
  } as ToolCallRecord;
}
