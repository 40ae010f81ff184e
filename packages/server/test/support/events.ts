import type { Ledger, LedgerEvent, NewLedgerEvent } from '../../src/index.ts';
import type { CallsTable } from '../../src/schema.ts';

export const T0 = 1_767_225_600_000;

/** The `n`th test move: a call coming into being in session `s1`. */
export function move(n: number, overrides: Partial<NewLedgerEvent> = {}): NewLedgerEvent {
  return {
    callId: `call_${n}`,
    session: 's1',
    from: null,
    to: 'pending',
    actor: 'user_1',
    at: T0 + n,
    ...overrides,
  };
}

/** Appends `count` moves, one transaction each, numbered from `first`. */
export async function appendMoves(ledger: Ledger, count: number, first = 1): Promise<LedgerEvent[]> {
  const events: LedgerEvent[] = [];
  for (let n = first; n < first + count; n += 1) {
    events.push(await ledger.transaction((trx) => ledger.appendEvent(trx, move(n))));
  }
  return events;
}

/** A `toolgate_calls` row for call `id`, pending since T0. */
export function callRow(id: string, overrides: Partial<CallsTable> = {}): CallsTable {
  return {
    id,
    session: 's1',
    owner: 'user_1',
    tool: 'charge',
    proposal_hash: 'h',
    input_hash: null,
    input: null,
    status: 'pending',
    version: 1,
    lease_owner: null,
    lease_expires_at: null,
    fence: 0,
    idempotency_key: `key_${id}`,
    output: null,
    reason: null,
    record: '{}',
    created_at: T0,
    updated_at: T0,
    ...overrides,
  };
}
