import type { SettledCall, ToolCallRecord } from '@toolgate/core';

/**
 * Callers waiting on calls: for a resting point (`propose` waits until a call runs, waits for a
 * person or ends), or for the end (`settled`); and the calls this process ended lately, so that
 * `settled` right after an end needs no read.
 *
 * @example
 * const waiters = createWaiters();
 * const rested = waiters.untilResting('call_1');
 * waiters.rested(record); // resolves it
 */
export interface Waiters {
  /** Resolves at the call's next resting point; `undefined` when another instance wrote it first. */
  readonly untilResting: (id: string) => Promise<ToolCallRecord | undefined>;
  readonly rested: (call: ToolCallRecord) => void;
  /** Another instance wrote the call first: its resting waiters read that one. */
  readonly taken: (id: string) => void;
  /** A move could not be written: its resting waiters hear why. `false` when nobody waited. */
  readonly failed: (id: string, error: unknown) => boolean;
  /** Resolves when the call ends; `cancel` takes the waiter back. */
  readonly untilEnded: (id: string) => { readonly ended: Promise<SettledCall>; readonly cancel: () => void };
  readonly settle: (call: SettledCall) => void;
  /** Resolves when the call is held in doubt for a person; `cancel` takes the waiter back. */
  readonly untilHeld: (id: string) => {
    readonly held: Promise<ToolCallRecord>;
    readonly cancel: () => void;
  };
  /** The call is held in doubt (here or on another instance). */
  readonly hold: (call: ToolCallRecord) => void;
  /** The call, if this process ended it lately. */
  readonly recent: (id: string) => SettledCall | undefined;
}

const RECENT = 1000;

/**
 * Builds the waiters of one gate.
 *
 * @example
 * const waiters = createWaiters();
 */
export function createWaiters(): Waiters {
  const resting = new Map<
    string,
    { resolve: (call: ToolCallRecord | undefined) => void; reject: (error: unknown) => void }[]
  >();
  const endings = new Map<string, ((call: SettledCall) => void)[]>();
  const holds = new Map<string, ((call: ToolCallRecord) => void)[]>();
  const recent = new Map<string, SettledCall>();

  const takeResting = (id: string) => {
    const waiting = resting.get(id);
    resting.delete(id);
    return waiting;
  };

  return {
    untilResting: (id) =>
      new Promise((resolve, reject) => {
        const list = resting.get(id) ?? [];
        list.push({ resolve, reject });
        resting.set(id, list);
      }),
    rested(call) {
      for (const { resolve } of takeResting(call.id) ?? []) resolve(call);
    },
    taken(id) {
      for (const { resolve } of takeResting(id) ?? []) resolve(undefined);
    },
    failed(id, error) {
      const waiting = takeResting(id);
      if (waiting === undefined) return false;
      for (const { reject } of waiting) reject(error);
      return true;
    },
    untilEnded(id) {
      const { promise, cancel } = waitIn(endings, id);
      return { ended: promise, cancel };
    },
    untilHeld(id) {
      const { promise, cancel } = waitIn(holds, id);
      return { held: promise, cancel };
    },
    hold(call) {
      const waiting = holds.get(call.id);
      if (waiting === undefined) return;
      holds.delete(call.id);
      for (const resolve of waiting) resolve(call);
    },
    settle(call) {
      recent.delete(call.id);
      recent.set(call.id, call);
      if (recent.size > RECENT) recent.delete(recent.keys().next().value as string);
      holds.delete(call.id);
      const waiting = endings.get(call.id);
      if (waiting === undefined) return;
      endings.delete(call.id);
      for (const resolve of waiting) resolve(call);
    },
    recent: (id) => recent.get(id),
  };
}

/** A waiter on `id` in `lists`, and the way to take it back. */
function waitIn<T>(
  lists: Map<string, ((value: T) => void)[]>,
  id: string,
): { readonly promise: Promise<T>; readonly cancel: () => void } {
  let resolveWaiter!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    resolveWaiter = resolve;
    const list = lists.get(id) ?? [];
    list.push(resolve);
    lists.set(id, list);
  });
  const cancel = () => {
    const list = lists.get(id)?.filter((resolve) => resolve !== resolveWaiter);
    if (list === undefined || list.length === 0) lists.delete(id);
    else lists.set(id, list);
  };
  return { promise, cancel };
}
