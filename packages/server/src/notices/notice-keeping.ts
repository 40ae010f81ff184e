import type { GateParts } from '../gate/parts.ts';
import { dueLoop } from '../timers/due-loop.ts';
import { deliverNotice } from './deliver.ts';
import type { Channel } from './notice.ts';
import type { NoticeSettling } from './settling.ts';
import { claimNotice, dueNotices, nextNoticeAt } from './notice-rows.ts';

/**
 * Delivers the ledger's notices on whichever process claims them: when a move or timer may have
 * written some (`poke`), at the soonest time one is due again, and at least every `leaseMs`.
 *
 * @example
 * const notices = keepNotices(parts, channels);
 * notices.poke();
 */
export interface NoticeKeeping {
  /** Claims and delivers every notice due now that nobody holds; resolves once each was tried and recorded. */
  readonly sweep: () => Promise<void>;
  /** Notices may have been written: look now. */
  readonly poke: () => void;
  readonly stop: () => Promise<void>;
}

const SWEEP_LIMIT = 100;

/**
 * Builds the notice keeper of a gate with channels.
 *
 * @example
 * const notices = keepNotices(parts, checkChannels(options.channels), settling);
 */
export function keepNotices(
  parts: Pick<GateParts, 'options' | 'settings' | 'ledger' | 'life'>,
  channels: readonly Channel[],
  settling: NoticeSettling,
): NoticeKeeping {
  const { ledger, settings, life } = parts;
  const { clock, leaseMs, instance, onError } = settings;
  const closing = new AbortController();

  /** Tries every notice due now; answers whether one was delivered while another was not (it may wait for it). */
  const sweepOnce = async (): Promise<boolean> => {
    const due = await dueNotices(ledger, clock.now(), SWEEP_LIMIT, instance);
    const delivered = await Promise.all(
      // A notice this process delivered and has not recorded yet is not delivered again.
      due
        .filter((row) => !settling.holds(row))
        .map(async (row) => {
          if (loop.stopped()) return false;
          try {
            const claimed = await claimNotice(ledger, row, {
              instance,
              now: clock.now(),
              leaseMs,
              delivered: settling.holds,
            });
            return (
              claimed !== undefined &&
              (await deliverNotice(parts, channels, claimed, closing.signal, settling)) === true
            );
          } catch (error) {
            // Nothing was written: the claim runs out, and this or another process tries again then.
            onError(error);
            return false;
          }
        }),
    );
    return delivered.includes(true) && delivered.includes(false);
  };
  const loop = dueLoop({
    clock,
    leaseMs,
    onError,
    closed: () => life.closed,
    running: true,
    pass: sweepOnce,
    // A delivery may free a notice of the same principal that waited for it (an ask before its end): look again.
    next: (again) => (again ? clock.now() : nextNoticeAt(ledger)),
  });

  return {
    sweep: async () => {
      await loop.sweep();
      // Asked for (a recovery pass): what was delivered is recorded before it resolves.
      await settling.flush();
    },
    poke: () => loop.poke(clock.now()),
    async stop() {
      closing.abort();
      await loop.stop();
      await settling.stop();
    },
  };
}
