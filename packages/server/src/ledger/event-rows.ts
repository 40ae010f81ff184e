import type { EventReason, LedgerEvent } from './ledger.ts';
import type { EventsTable } from './schema.ts';

/**
 * An event row as readers see it.
 *
 * @example
 * const events = rows.map(toEvent);
 */
export function toEvent(row: EventsTable): LedgerEvent {
  const event = {
    seq: row.seq,
    callId: row.call_id,
    session: row.session,
    from: row.from_status,
    to: row.to_status,
    actor: row.actor,
    at: row.at,
  };
  return row.reason === null ? event : { ...event, reason: JSON.parse(row.reason) as EventReason };
}
