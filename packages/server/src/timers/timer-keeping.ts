import type { GateParts } from '../gate/parts.ts';
import type { TimerKind } from '../ledger/schema.ts';
import { dueLoop } from './due-loop.ts';
import { fireTimer, type OnFired } from './fire.ts';
import { claimTimer, dueTimers, nextTimerAt } from './timer-rows.ts';

/**
 * What one pass over the due timers did: the calls reminded, escalated and expired.
 *
 * @example
 * const { reminded, escalated, expired } = await timers.sweep();
 */
export interface TimerSweep {
  readonly reminded: readonly string[];
  readonly escalated: readonly string[];
  readonly expired: readonly string[];
}

/**
 * Fires due timers on whichever process claims them: now and then (at the soonest due time this
 * process knows of, and at least every `leaseMs` for timers other processes wrote or left), and
 * on `sweep()`.
 *
 * @example
 * const timers = keepTimers(parts, { running: true });
 * await timers.stop();
 */
export interface TimerKeeping {
  /** Claims and fires every timer due now that nobody holds. */
  readonly sweep: () => Promise<TimerSweep>;
  /** A call began to wait here: its timers may be due sooner than the next pass. */
  readonly poke: () => void;
  readonly stop: () => Promise<void>;
}

const SWEEP_LIMIT = 100;

/**
 * Builds the timer keeper of a gate; with `running`, it sweeps on its own until stopped.
 *
 * @example
 * const timers = keepTimers(parts, { running: options.recover !== false });
 */
export function keepTimers(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'tools' | 'keeper' | 'life'>,
  { running, onFired }: { readonly running: boolean; readonly onFired?: OnFired | undefined },
): TimerKeeping {
  const { ledger, settings, life } = parts;
  const { clock, leaseMs, instance, onError } = settings;

  const sweepOnce = async (): Promise<TimerSweep> => {
    const fired: Record<TimerKind, string[]> = { reminder: [], escalation: [], expiry: [] };
    for (;;) {
      const due = await dueTimers(ledger, clock.now(), SWEEP_LIMIT);
      for (const row of due) {
        if (loop.stopped()) break;
        const claimed = await claimTimer(ledger, row, { instance, now: clock.now(), leaseMs });
        if (claimed === undefined) continue;
        try {
          const kind = await fireTimer(parts, claimed, onFired);
          if (kind !== undefined) fired[kind].push(claimed.call_id);
        } catch (error) {
          // Rolled back: the claim runs out, and this or another process fires it then.
          onError(error);
        }
      }
      if (due.length < SWEEP_LIMIT || loop.stopped()) break;
    }
    return { reminded: fired.reminder, escalated: fired.escalation, expired: fired.expiry };
  };
  const loop = dueLoop({
    clock,
    leaseMs,
    onError,
    closed: () => life.closed,
    running,
    pass: sweepOnce,
    next: () => nextTimerAt(ledger),
  });

  return {
    sweep: loop.sweep,
    poke: () => loop.poke(nextTimerAt(ledger)),
    stop: loop.stop,
  };
}
