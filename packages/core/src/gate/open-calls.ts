import type { SettledCall } from '../record/record.ts';

/** What a call has while it is open that is not part of its record; dropped when it settles. */
interface Open {
  waiters?: ((call: SettledCall) => void)[];
  detach?: () => void;
}

/**
 * What the gate holds for calls that have not ended: the promises of `settled` waiting on them,
 * and the caller's abort signal each listens to. All of it is let go when the call settles.
 *
 * @example
 * const open = createOpenCalls();
 * const done = open.wait('call_1');
 * open.settle(record); // resolves `done`, stops listening to the call's signal
 */
export interface OpenCalls {
  /** A promise of the call once it settles. */
  readonly wait: (id: string) => Promise<SettledCall>;
  /** Calls `onAbort` when `signal` aborts before the call settles (at once if it already has). */
  readonly watch: (id: string, signal: AbortSignal, onAbort: () => void) => void;
  /** The call has settled: resolve its waiters and stop watching its signal. */
  readonly settle: (call: SettledCall) => void;
  /** How many calls hold something here (settled calls never do). */
  readonly size: () => number;
}

/**
 * Creates the open side of a gate's calls.
 *
 * @example
 * const open = createOpenCalls();
 */
export function createOpenCalls(): OpenCalls {
  const open = new Map<string, Open>();

  function openOf(id: string): Open {
    let side = open.get(id);
    if (side === undefined) {
      side = {};
      open.set(id, side);
    }
    return side;
  }

  return {
    wait: (id) =>
      new Promise((resolve) => {
        (openOf(id).waiters ??= []).push(resolve);
      }),
    watch(id, signal, onAbort) {
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      openOf(id).detach = () => signal.removeEventListener('abort', onAbort);
    },
    settle(call) {
      const side = open.get(call.id);
      if (side === undefined) return;
      open.delete(call.id);
      side.detach?.();
      for (const resolve of side.waiters ?? []) resolve(call);
    },
    size: () => open.size,
  };
}
