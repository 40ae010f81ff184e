import type { ReadonlyStore, ToolCallsState } from './gate.ts';
import { createListeners, type Delivery, type Listeners } from './listeners.ts';
import type { ToolCallRecord } from '../call/record.ts';

/**
 * The records a gate shows, as the read-only store `gate.calls` and per-call subscriptions
 * (`gate.subscribeCall`). Both the browser gate and the remote gate keep their records in one, so
 * a listener that throws, or subscribes again while it is told, behaves the same on either.
 *
 * @example
 * const store = createCallStore(records, delivery, onError);
 * store.publish(['call_1']);
 */
export interface CallStore {
  readonly calls: ReadonlyStore<ToolCallsState>;
  /** Calls `listener` after each update that moves the call with this id; returns the unsubscribe. */
  readonly subscribeCall: (id: string, listener: () => void) => () => void;
  /** Tells every subscriber that these calls moved, as one update. */
  readonly publish: (changed: readonly string[]) => void;
}

/**
 * Creates the store over a map of records the gate keeps (updated in place, so a long chat does
 * not copy it on every move).
 *
 * @example
 * const store = createCallStore(new Map(), createDelivery(), console.error);
 */
export function createCallStore(records: ReadonlyMap<string, ToolCallRecord>, delivery: Delivery, onError: (error: unknown) => void): CallStore {
  let version = 0;
  const initial: ToolCallsState = { records, version, changed: [] };
  let state = initial;
  const subscribers = createListeners<[ToolCallsState, ToolCallsState]>(delivery, onError);
  const watchers = new Map<string, Listeners<[]>>();
  return {
    calls: { getState: () => state, getInitialState: () => initial, subscribe: subscribers.subscribe },
    subscribeCall(id, listener) {
      let listeners = watchers.get(id);
      if (listeners === undefined) watchers.set(id, (listeners = createListeners<[]>(delivery, onError)));
      const unsubscribe = listeners.subscribe(listener);
      const own = listeners;
      return () => {
        unsubscribe();
        if (own.size() === 0 && watchers.get(id) === own) watchers.delete(id);
      };
    },
    publish(changed) {
      if (changed.length === 0) return;
      const previous = state;
      state = { records, version: ++version, changed };
      subscribers.emit(state, previous);
      for (const id of changed) watchers.get(id)?.emit();
    },
  };
}
