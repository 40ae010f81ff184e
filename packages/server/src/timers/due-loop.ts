import type { Clock } from '@toolgate/core';

/**
 * A loop over ledger rows that come due (timers, notices): one pass at a time in this process,
 * run when something may be due now (`poke`), at the soonest time the last pass says one is due
 * next, and at least every `leaseMs`, for rows other processes wrote or left behind when they died.
 *
 * @example
 * const loop = dueLoop({ clock, leaseMs, onError, closed: () => life.closed, running: true, pass, next: () => nextTimerAt(ledger) });
 * loop.poke(clock.now());
 */
export interface DueLoop<T> {
  /** Runs one pass, after the one running now. */
  readonly sweep: () => Promise<T>;
  /** Something may be due at `at` (a time, or a lookup of one): the next pass runs then, or sooner. */
  readonly poke: (at: number | Promise<number | undefined>) => void;
  /** Whether `stop` was called: a pass stops taking rows then. */
  readonly stopped: () => boolean;
  readonly stop: () => Promise<void>;
}

/**
 * Builds a due loop; with `running` false it only runs the passes `sweep` asks for.
 *
 * @example
 * const loop = dueLoop({ clock, leaseMs, onError, closed, running, pass: sweepOnce, next: () => nextNoticeAt(ledger) });
 */
export function dueLoop<T>(options: {
  readonly clock: Clock;
  readonly leaseMs: number;
  readonly onError: (error: unknown) => void;
  readonly closed: () => boolean;
  readonly running: boolean;
  readonly pass: () => Promise<T>;
  /** When the next pass is due, from what the last one did. */
  readonly next: (result: T) => Promise<number | undefined> | number | undefined;
}): DueLoop<T> {
  const { clock, leaseMs, onError, closed, running, pass, next } = options;
  let timer: unknown;
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();

  const sweep = (): Promise<T> => {
    // One pass at a time in this process: a second waits for the first, then looks again.
    const run = current.then(pass, pass);
    current = run.catch(() => undefined);
    return run;
  };
  const arm = (at: number | undefined) => {
    if (stopped || !running) return;
    if (timer !== undefined) clock.clearTimeout(timer);
    const wait = Math.min(leaseMs, Math.max(0, (at ?? Infinity) - clock.now()));
    timer = clock.setTimeout(() => {
      timer = undefined;
      if (stopped || closed()) return;
      sweep()
        .then(next)
        .then(arm, (error: unknown) => {
          onError(error);
          arm(undefined);
        });
    }, wait);
  };
  if (running) arm(clock.now());

  return {
    sweep,
    poke(at) {
      if (stopped || !running) return;
      Promise.resolve(at).then(arm, onError);
    },
    stopped: () => stopped || closed(),
    async stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      await current;
    },
  };
}
