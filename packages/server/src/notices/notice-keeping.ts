import type { GateParts } from '../gate/parts.ts';
import { deliverNotice } from './deliver.ts';
import type { Channel } from './notice.ts';
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
  /** Claims and delivers every notice due now that nobody holds; resolves once each was tried. */
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
 * const notices = keepNotices(parts, checkChannels(options.channels));
 */
export function keepNotices(
  parts: Pick<GateParts, 'options' | 'settings' | 'ledger' | 'life'>,
  channels: readonly Channel[],
): NoticeKeeping {
  const { ledger, settings, life } = parts;
  const { clock, leaseMs, instance, onError } = settings;
  let timer: unknown;
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  let again = false;
  const closing = new AbortController();

  const sweepOnce = async (): Promise<void> => {
    const due = await dueNotices(ledger, clock.now(), SWEEP_LIMIT);
    await Promise.all(
      due.map(async (row) => {
        if (stopped || life.closed) return;
        try {
          const claimed = await claimNotice(ledger, row, { instance, now: clock.now(), leaseMs });
          if (
            claimed !== undefined &&
            (await deliverNotice(parts, channels, claimed, closing.signal)) === true
          )
            again = true;
        } catch (error) {
          // Nothing was written: the claim runs out, and this or another process tries again then.
          onError(error);
        }
      }),
    );
  };
  const sweep = (): Promise<void> => {
    const pass = current.then(sweepOnce, sweepOnce);
    current = pass.catch(() => undefined);
    return pass;
  };

  const arm = (at: number | undefined) => {
    if (stopped) return;
    if (timer !== undefined) clock.clearTimeout(timer);
    const wait = Math.min(leaseMs, Math.max(0, (at ?? Infinity) - clock.now()));
    timer = clock.setTimeout(run, wait);
  };
  function run() {
    timer = undefined;
    if (stopped || life.closed) return;
    again = false;
    sweep()
      // A delivery may free the next notice of the same principal (an ask before its end): look again.
      .then(() => (again ? clock.now() : nextNoticeAt(ledger)))
      .then(arm, (error: unknown) => {
        onError(error);
        arm(undefined);
      });
  }
  arm(clock.now());

  return {
    sweep,
    poke() {
      if (!stopped) arm(clock.now());
    },
    async stop() {
      stopped = true;
      closing.abort();
      if (timer !== undefined) clock.clearTimeout(timer);
      await current;
    },
  };
}
