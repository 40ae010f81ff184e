import type { Clock } from '@toolgate/core';

/** A clock that only moves when a test says so. */
export interface FakeClock extends Clock {
  advance(ms: number): void;
  readonly pending: number;
  /** When each pending timer is due, soonest first: a test can wait until a timer it means to fire is set. */
  readonly due: readonly number[];
}

/**
 * A fake clock starting at 2026-01-01T00:00:00Z; timers fire only in `advance`, in the order they are due.
 *
 * @example
 * const clock = createFakeClock();
 * const gate = createToolGate({ tools: [slowTool], clock }); // slowTool has timeoutMs: 5_000
 * clock.advance(5_000); // the running call times out now
 */
export function createFakeClock(start = 1_767_225_600_000): FakeClock {
  let now = start;
  let nextHandle = 1;
  const timers = new Map<number, { at: number; callback: () => void }>();
  return {
    now: () => now,
    setTimeout(callback, ms) {
      const handle = nextHandle++;
      timers.set(handle, { at: now + ms, callback });
      return handle;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        let first: [number, { at: number; callback: () => void }] | undefined;
        for (const entry of timers)
          if (entry[1].at <= until && (!first || entry[1].at < first[1].at)) first = entry;
        if (!first) break;
        timers.delete(first[0]);
        now = first[1].at;
        first[1].callback();
      }
      now = until;
    },
    get pending() {
      return timers.size;
    },
    get due() {
      return [...timers.values()].map(({ at }) => at).sort((a, b) => a - b);
    },
  };
}
