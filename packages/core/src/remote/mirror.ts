import { isTerminal, type SettledCall, type ToolCallRecord } from '../record/record.ts';
import { createCallStore, type ReadonlyStore, type ToolCallsState } from '../gate/call-store.ts';
import { createDelivery } from '../gate/listeners.ts';

/**
 * A remote gate's records: the server's calls as its feed delivered them, the store that tells
 * subscribers, and the promises of `settled(id)`. It decides nothing: the feed's reader puts what
 * the server says.
 *
 * @example
 * const mirror = createMirror({ onError, onMoved: decisions.moved, onSettled: (call) => tools.release(call.id) });
 * mirror.put(record);
 * mirror.publish([record.id]);
 */
export interface Mirror {
  readonly get: (id: string) => ToolCallRecord | undefined;
  /** Keeps a record; the caller publishes. A record whose status changed, or that ended, is told to `onMoved` and `onSettled`. */
  readonly put: (record: ToolCallRecord) => void;
  /** Forgets every record (a fresh snapshot replaces them); the caller publishes. */
  readonly clear: () => void;
  /** Forgets one record (a call that left an inbox), telling `onMoved`; the caller publishes. */
  readonly remove: (id: string) => void;
  readonly ids: () => IterableIterator<string>;
  /** The calls that have not ended. */
  readonly open: () => string[];
  /** Tells subscribers that these calls changed (their record, or their request). */
  readonly publish: (changed: readonly string[]) => void;
  readonly settled: (id: string) => Promise<SettledCall>;
  /** Rejects every `settled` promise that is still waiting; later ones reject at once. */
  readonly close: () => void;
  readonly calls: ReadonlyStore<ToolCallsState>;
  readonly subscribeCall: (id: string, listener: () => void) => () => void;
}

/**
 * What a mirror tells its gate.
 *
 * @example
 * const init: MirrorInit = { onError: console.error, onMoved: () => {}, onSettled: () => {} };
 */
export interface MirrorInit {
  /** Receives errors thrown by subscribers. */
  readonly onError: (error: unknown) => void;
  /** A known call's status changed. */
  readonly onMoved: (id: string) => void;
  /** A call ended (once its record is kept). */
  readonly onSettled: (call: SettledCall) => void;
}

/** Whether a record moved as a person's request would move it: its status, its doubt, or its compensation. */
function moved(before: ToolCallRecord, after: ToolCallRecord): boolean {
  return (
    before.status !== after.status ||
    (before.doubt === undefined) !== (after.doubt === undefined) ||
    before.compensation?.status !== after.compensation?.status
  );
}

/**
 * Creates an empty mirror.
 *
 * @example
 * const mirror = createMirror({ onError, onMoved: () => {}, onSettled: () => {} });
 */
export function createMirror(init: MirrorInit): Mirror {
  const records = new Map<string, ToolCallRecord>();
  const store = createCallStore(records, createDelivery(), init.onError);
  const waiters = new Map<
    string,
    { resolve: (call: SettledCall) => void; reject: (error: Error) => void }[]
  >();
  let closed = false;

  function put(record: ToolCallRecord): void {
    const before = records.get(record.id);
    records.set(record.id, record);
    if (before !== undefined && moved(before, record)) init.onMoved(record.id);
    if (!isTerminal(record.status)) return;
    init.onSettled(record as SettledCall);
    const waiting = waiters.get(record.id);
    waiters.delete(record.id);
    for (const { resolve } of waiting ?? []) resolve(record as SettledCall);
  }

  function settled(id: string): Promise<SettledCall> {
    const call = records.get(id);
    if (call !== undefined && isTerminal(call.status)) return Promise.resolve(call as SettledCall);
    if (closed)
      return Promise.reject(
        new Error(`gate.settled: the remote gate is closed, and call "${id}" has not settled.`),
      );
    return new Promise((resolve, reject) => {
      let list = waiters.get(id);
      if (list === undefined) waiters.set(id, (list = []));
      list.push({ resolve, reject });
    });
  }

  return {
    get: (id) => records.get(id),
    put,
    clear: () => records.clear(),
    remove(id) {
      if (records.delete(id)) init.onMoved(id);
    },
    ids: () => records.keys(),
    open: () => [...records.values()].filter((call) => !isTerminal(call.status)).map((call) => call.id),
    publish: (changed) => store.publish(changed),
    settled,
    close() {
      closed = true;
      for (const [id, list] of waiters) {
        for (const { reject } of list)
          reject(new Error(`gate.settled: the remote gate was closed before call "${id}" settled.`));
      }
      waiters.clear();
    },
    calls: store.calls,
    subscribeCall: store.subscribeCall,
  };
}
