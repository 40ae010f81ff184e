import type { AuditWriter } from './audit.ts';
import { createCallStore, type ReadonlyStore, type ToolCallsState } from './call-store.ts';
import { emptyListOf } from './empty-list.ts';
import type { Delivery } from './listeners.ts';
import {
  isTerminal,
  type Repair,
  type SettledCall,
  type ToolCallRecord,
  type Transition,
} from '../record/record.ts';

/**
 * The browser gate's records: every call it knows by id, the settled ones it no longer keeps in
 * full (`retain`), and the store that tells subscribers. Writes made inside one `batch` reach
 * subscribers as one store update; the audit log still gets every transition, in order.
 *
 * @example
 * const book = createCallBook({ retain: 500, audit, delivery, onError, onSettled: (call) => wake(call) });
 * book.batch(() => book.write(next, current));
 */
export interface CallBook {
  /** A call kept in full, or `undefined` (never proposed, or dropped by `retain`). */
  readonly get: (id: string) => ToolCallRecord | undefined;
  /** Any call this gate has seen: a call dropped by `retain` answers its stub, without input or output. */
  readonly lookup: (id: string) => ToolCallRecord | undefined;
  /**
   * Keeps `next`, audits the move from `from` (through `via`, when two moves were made as one), and
   * tells subscribers (now, or when the batch ends).
   */
  readonly write: (
    next: ToolCallRecord,
    from: ToolCallRecord | undefined,
    repairs?: readonly Repair[],
    via?: Transition,
  ) => void;
  /** Runs `operation`; every write inside it, however deep, is one update for subscribers. */
  readonly batch: <T>(operation: () => T) => T;
  /** Whether a batch is open: subscribers hear of a write only when it ends. */
  readonly batching: () => boolean;
  readonly calls: ReadonlyStore<ToolCallsState>;
  readonly subscribeCall: (id: string, listener: () => void) => () => void;
}

/**
 * What a call book is made of.
 *
 * @example
 * const init: CallBookInit = { retain: Infinity, audit, delivery, onError, onSettled: () => {} };
 */
export interface CallBookInit {
  /** How many settled calls to keep in full; older ones become stubs in `lookup`. */
  readonly retain: number;
  readonly audit: AuditWriter;
  readonly delivery: Delivery;
  readonly onError: (error: unknown) => void;
  /** Told of each call that becomes terminal, once its record is kept (and published, outside a batch). */
  readonly onSettled: (call: SettledCall) => void;
}

/**
 * Creates an empty call book.
 *
 * @example
 * const book = createCallBook({ retain: Infinity, audit, delivery, onError, onSettled: open.settle });
 */
export function createCallBook(init: CallBookInit): CallBook {
  const { retain, audit, onSettled } = init;
  const records = new Map<string, ToolCallRecord>();
  const evicted = new Map<string, SettledCall>();
  // Settled ids, oldest first (a Set keeps insertion order), for `retain`.
  const settledOrder = new Set<string>();
  const callStore = createCallStore(records, init.delivery, init.onError);
  let depth = 0;
  let dirty = emptyListOf('');

  function touch(id: string): void {
    if (dirty[dirty.length - 1] !== id && !dirty.includes(id)) dirty.push(id);
  }

  function flush(): void {
    if (dirty.length === 0) return;
    const changed = dirty;
    dirty = emptyListOf('');
    callStore.publish(changed);
  }

  function evictBeyondRetention(id: string): void {
    if (retain === Infinity) return;
    settledOrder.add(id);
    for (const oldId of settledOrder) {
      if (settledOrder.size <= retain) break;
      settledOrder.delete(oldId);
      const old = records.get(oldId);
      records.delete(oldId);
      if (old !== undefined)
        evicted.set(
          oldId,
          Object.freeze({ ...old, input: undefined, output: undefined, evicted: true }) as SettledCall,
        );
      touch(oldId);
    }
  }

  return {
    get: (id) => records.get(id),
    lookup: (id) => records.get(id) ?? evicted.get(id),
    write(next, from, repairs, via) {
      records.set(next.id, next);
      // The audit trail first: a listener told below may move the call again, and its event comes after this one.
      if (via !== undefined && from !== undefined) audit.moveThrough(next, from, via.status, via.at, repairs);
      else if (from === undefined || from.status !== next.status) audit.move(next, from, repairs);
      const terminal = isTerminal(next.status);
      if (terminal) evictBeyondRetention(next.id);
      touch(next.id);
      if (depth === 0) flush();
      if (terminal) onSettled(next as SettledCall);
    },
    batch(operation) {
      depth++;
      try {
        return operation();
      } finally {
        if (--depth === 0 && dirty.length > 0) flush();
      }
    },
    batching: () => depth > 0,
    calls: callStore.calls,
    subscribeCall: callStore.subscribeCall,
  };
}
