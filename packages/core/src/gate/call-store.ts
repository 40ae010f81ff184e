import type { StoreApi } from 'zustand/vanilla';
import { createListeners, type Delivery, type Listeners } from './listeners.ts';
import type { ToolCallRecord } from '../record/record.ts';

/**
 * The state of `gate.calls`. `records` holds every known call in the order they were proposed.
 * It is updated in place (copying it on each transition would cost O(n) per update in a long
 * chat), so select a record or derive a value from it rather than selecting the map itself;
 * `version` changes on every update and `changed` lists the calls that moved in it. To follow
 * one call, `gate.subscribeCall` is cheaper than a selector over this store.
 *
 * @example
 * const waiting = [...gate.calls.getState().records.values()].filter((c) => c.status === 'awaiting_approval');
 */
export interface ToolCallsState {
  readonly records: ReadonlyMap<string, ToolCallRecord>;
  readonly version: number;
  readonly changed: readonly string[];
}

/**
 * A read-only Zustand store: subscribe and read, never write.
 *
 * @example
 * const unsubscribe = gate.calls.subscribe((state) => render(state.records));
 */
export type ReadonlyStore<T> = Pick<StoreApi<T>, 'getState' | 'getInitialState' | 'subscribe'>;

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
export function createCallStore(
  records: ReadonlyMap<string, ToolCallRecord>,
  delivery: Delivery,
  onError: (error: unknown) => void,
): CallStore {
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
