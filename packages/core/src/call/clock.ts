/**
 * Time, injectable so that timeouts and preview batching can be tested with a fake clock and no
 * real waiting.
 *
 * @example
 * const clock: Clock = { now: () => fake.now, setTimeout: fake.schedule, clearTimeout: fake.unschedule };
 */
export interface Clock {
  readonly now: () => number;
  readonly setTimeout: (callback: () => void, ms: number) => unknown;
  readonly clearTimeout: (handle: unknown) => void;
}

/**
 * The real clock: `Date.now` and the global timers.
 *
 * @example
 * const clock = options.clock ?? systemClock;
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => {
    globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>);
  },
};
