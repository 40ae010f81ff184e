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
      let resolveWaiter!: (call: SettledCall) => void;
      const ended = new Promise<SettledCall>((resolve) => {
        resolveWaiter = resolve;
        const list = endings.get(id) ?? [];
        list.push(resolve);
        endings.set(id, list);
      });
      const cancel = () => {
        const list = endings.get(id)?.filter((resolve) => resolve !== resolveWaiter);
        if (list === undefined || list.length === 0) endings.delete(id);
        else endings.set(id, list);
      };
      return { ended, cancel };
    },
    settle(call) {
      recent.delete(call.id);
      recent.set(call.id, call);
      if (recent.size > RECENT) recent.delete(recent.keys().next().value as string);
      const waiting = endings.get(call.id);
      if (waiting === undefined) return;
      endings.delete(call.id);
      for (const resolve of waiting) resolve(call);
    },
    recent: (id) => recent.get(id),
  };
}
