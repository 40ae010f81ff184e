import { emptyListOf } from './empty-list.ts';
import { createDelivery, createListeners, type Delivery } from './listeners.ts';
import {
  TOOL_CALL_STATUSES,
  type Reason,
  type Repair,
  type ToolCallRecord,
  type ToolCallStatus,
} from '../record/record.ts';

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
  /**
   * Records a call's move from `from` (nothing, for a new call) to its current status: the same
   * event as `record(auditEvent(call, from, repairs))`, made only when a listener or `export` asks.
   */
  readonly move: (
    call: ToolCallRecord,
    from: ToolCallRecord | undefined,
    repairs?: readonly Repair[],
  ) => void;
  /**
   * Records two moves made as one: from `from` to `via`, at `viaAt` (with `repairs`), then on to
   * the call's current status: the events `move` records for each of the two, in order.
   */
  readonly moveThrough: (
    call: ToolCallRecord,
    from: ToolCallRecord,
    via: ToolCallStatus,
    viaAt: number,
    repairs?: readonly Repair[],
  ) => void;
  /** Whether a listener is subscribed: one would be told of each move as it is made. */
  readonly listening: () => boolean;
}

const STATUSES = TOOL_CALL_STATUSES;
// A status's code is its place in the list, from 1 (0 is a call's first move, from nothing).
const STATUS_CODE = Object.fromEntries(STATUSES.map((status, index) => [status, index + 1])) as Readonly<
  Record<ToolCallStatus, number>
>;

/**
 * The kept events, in columns. A gate makes several moves a call and keeps their events for its
 * life; an object per move (frozen, so a call's own record work doubled) was a measurable share
 * of a call's cost and of what the collector copies. An event is made when a listener is told of
 * it or `export` asks, once: from then on that same frozen object is the event.
 */
interface Columns {
  readonly ids: string[];
  readonly names: string[];
  /** `from` and `to` as status codes, `from * 16 + to` (0 for no `from`). */
  readonly moves: number[];
  readonly ats: number[];
  /** The event object where one was made (or given to `record`). */
  readonly made: (AuditEvent | undefined)[];
}

const emptyColumns = (): Columns => ({
  ids: emptyListOf(''),
  names: emptyListOf(''),
  moves: [],
  ats: emptyListOf(0.5),
  made: emptyListOf<AuditEvent | undefined>(undefined),
});

function sliceColumns(columns: Columns, start: number): Columns {
  return {
    ids: columns.ids.slice(start),
    names: columns.names.slice(start),
    moves: columns.moves.slice(start),
    ats: columns.ats.slice(start),
    made: columns.made.slice(start),
  };
}

function eventAt(columns: Columns, i: number): AuditEvent {
  const made = columns.made[i];
  if (made !== undefined) return made;
  const move = columns.moves[i] as number;
  const event: AuditEvent = Object.freeze({
    callId: columns.ids[i] as string,
    name: columns.names[i] as string,
    from: move < 16 ? null : (STATUSES[(move >> 4) - 1] as ToolCallStatus),
    to: STATUSES[(move & 15) - 1] as ToolCallStatus,
    at: columns.ats[i] as number,
  });
  columns.made[i] = event;
  return event;
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
  let columns = emptyColumns();
  const listeners = createListeners<[AuditEvent]>(delivery, onError);
  function keep(callId: string, name: string, move: number, at: number, made: AuditEvent | undefined): void {
    columns.ids.push(callId);
    columns.names.push(name);
    columns.moves.push(move);
    columns.ats.push(at);
    columns.made.push(made);
    // Trim in halves so that keeping a bounded log stays O(1) per event on average.
    if (columns.ids.length > limit * 2) columns = sliceColumns(columns, columns.ids.length - limit);
  }
  const size = () => Math.min(columns.ids.length, limit);
  return {
    record(event) {
      const move = (event.from === null ? 0 : STATUS_CODE[event.from] * 16) + STATUS_CODE[event.to];
      keep(event.callId, event.name, move, event.at, event);
      listeners.emit(event);
    },
    move(call, from, repairs) {
      const told = listeners.size() > 0;
      // A move with a reason or repairs is rare: its event is made now, with them, as it is for a listener.
      const made =
        told ||
        (repairs !== undefined && repairs.length > 0) ||
        call.history[call.history.length - 1]?.reason !== undefined
          ? auditEvent(call, from, repairs)
          : undefined;
      const move = (from === undefined ? 0 : STATUS_CODE[from.status] * 16) + STATUS_CODE[call.status];
      keep(call.id, call.name, move, call.updatedAt, made);
      if (told) listeners.emit(made as AuditEvent);
    },
    moveThrough(call, from, via, viaAt, repairs) {
      const told = listeners.size() > 0;
      const first =
        told || (repairs !== undefined && repairs.length > 0)
          ? eventOf(call.id, call.name, from.status, via, viaAt, undefined, repairs)
          : undefined;
      keep(call.id, call.name, STATUS_CODE[from.status] * 16 + STATUS_CODE[via], viaAt, first);
      if (told) listeners.emit(first as AuditEvent);
      // The second move is the call's last: its reason, if any, is the record's.
      const reason = call.history[call.history.length - 1]?.reason;
      const second =
        told || reason !== undefined
          ? eventOf(call.id, call.name, via, call.status, call.updatedAt, reason, undefined)
          : undefined;
      keep(call.id, call.name, STATUS_CODE[via] * 16 + STATUS_CODE[call.status], call.updatedAt, second);
      if (told) listeners.emit(second as AuditEvent);
    },
    listening: () => listeners.size() > 0,
    subscribe: listeners.subscribe,
    export() {
      const all = columns;
      const events: AuditEvent[] = [];
      for (let i = all.ids.length - size(); i < all.ids.length; i++) events.push(eventAt(all, i));
      return events;
    },
    size,
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
  return eventOf(
    call.id,
    call.name,
    from === undefined ? null : from.status,
    call.status,
    call.updatedAt,
    call.history[call.history.length - 1]?.reason,
    repairs,
  );
}

function eventOf(
  callId: string,
  name: string,
  from: ToolCallStatus | null,
  to: ToolCallStatus,
  at: number,
  reason: Reason | undefined,
  repairs: readonly Repair[] | undefined,
): AuditEvent {
  const event = { callId, name, from, to, at };
  // The reason is the record's own, frozen; so is the event, so that no listener can rewrite the trail.
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
