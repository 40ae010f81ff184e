import { createDelivery, createListeners, type Delivery } from './listeners.ts';
import type { Reason, Repair, ToolCallRecord, ToolCallStatus } from '../record/record.ts';

/**
 * One transition of one call. A call's first event has `from: null` (it came into being as
 * `pending`); its last one has a terminal `to`.
 *
 * @example
 * const event: AuditEvent = { callId: 'call_1', name: 'charge', from: 'executing', to: 'committed', at: 1767225600000 };
 */
export interface AuditEvent {
  readonly callId: string;
  readonly name: string;
  readonly from: ToolCallStatus | null;
  readonly to: ToolCallStatus;
  readonly at: number;
  readonly reason?: Reason;
  /** Repairs applied to the arguments, on the event into `validated`. */
  readonly repairs?: readonly Repair[];
}

/**
 * Every transition the gate has made, in order. Settled calls dropped by `retain` keep their events.
 *
 * @example
 * const stop = gate.audit.subscribe((event) => console.log(event.callId, event.from, '→', event.to));
 * const trail = gate.audit.export(); // send to your logs
 */
export interface AuditLog {
  /** Calls `listener` with each event as it happens; returns the unsubscribe function. */
  readonly subscribe: (listener: (event: AuditEvent) => void) => () => void;
  /** A copy of the events kept so far, oldest first. */
  readonly export: () => AuditEvent[];
  /** How many events are kept. */
  readonly size: () => number;
}

/**
 * The writer side, used by the gate only.
 *
 * @example
 * const audit: AuditWriter = createAuditLog(Infinity, console.error);
 * audit.record({ callId: 'c1', name: 'charge', from: null, to: 'pending', at: Date.now() });
 */
export interface AuditWriter extends AuditLog {
  readonly record: (event: AuditEvent) => void;
}

/**
 * Creates an audit log that keeps at most `limit` events (the oldest are dropped first). Listeners
 * are told through `delivery`, so that an event raised by a listener reaches every listener after
 * the one it was raised in.
 *
 * @example
 * const audit = createAuditLog(Infinity, console.error);
 */
export function createAuditLog(
  limit: number,
  onError: (error: unknown) => void,
  delivery: Delivery = createDelivery(),
): AuditWriter {
  let events: AuditEvent[] = [];
  const listeners = createListeners<[AuditEvent]>(delivery, onError);
  return {
    record(event) {
      events.push(event);
      // Trim in halves so that keeping a bounded log stays O(1) per event on average.
      if (events.length > limit * 2) events = events.slice(events.length - limit);
      listeners.emit(event);
    },
    subscribe: listeners.subscribe,
    export: () => (events.length > limit ? events.slice(events.length - limit) : events.slice()),
    size: () => Math.min(events.length, limit),
  };
}

/**
 * The event for a call's move from `from` (or from nothing, for a new call) to its current status.
 *
 * @example
 * audit.record(auditEvent(next, previous));
 */
export function auditEvent(
  call: ToolCallRecord,
  from: ToolCallRecord | undefined,
  repairs?: readonly Repair[],
): AuditEvent {
  const event = {
    callId: call.id,
    name: call.name,
    from: from === undefined ? null : from.status,
    to: call.status,
    at: call.updatedAt,
  };
  // The reason is the record's own, frozen; so is the event, so that no listener can rewrite the trail.
  const reason = call.history[call.history.length - 1]?.reason;
  if (reason === undefined && (repairs === undefined || repairs.length === 0)) return Object.freeze(event);
  return Object.freeze({
    ...event,
    ...(reason === undefined ? {} : { reason }),
    ...(repairs === undefined || repairs.length === 0
      ? {}
      : {
          repairs: Object.isFrozen(repairs)
            ? repairs
            : Object.freeze(repairs.map((repair) => Object.freeze({ ...repair }))),
        }),
  });
}
