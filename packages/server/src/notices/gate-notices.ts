import type { Tail } from '../feed/feed.ts';
import type { GateParts } from '../gate/parts.ts';
import type { OnFired } from '../timers/fire.ts';
import { keepNotices } from './notice-keeping.ts';
import { noticesOfTimers } from './notice-watch.ts';

/** Codes of events that write no notice: a delivery's own events. */
const QUIET = new Set(['notice_delivered', 'notice_failed']);

/**
 * A gate's notices: delivered by this process whenever the ledger's tail brings a move that may
 * have written some (on any process: a call asked, reminded, escalated, decided or expired), and
 * written by its timers through `onFired`.
 *
 * @example
 * const notices = gateNotices(parts, tail);
 * const timers = keepTimers(parts, { running, onFired: notices?.onFired });
 */
export function gateNotices(
  parts: Pick<GateParts, 'options' | 'settings' | 'channels' | 'ledger' | 'life'>,
  tail: Tail,
):
  | {
      readonly onFired: OnFired;
      readonly sweep: () => Promise<void>;
      readonly stop: () => Promise<void>;
    }
  | undefined {
  const { channels, settings } = parts;
  if (channels.length === 0) return undefined;
  const keeping = keepNotices(parts, channels);
  const following = tail.subscribe((moves) => {
    const waits = moves.some(
      ({ event }) =>
        (event.from === 'awaiting_approval' || event.to === 'awaiting_approval') &&
        !QUIET.has(event.reason?.code ?? ''),
    );
    if (waits) keeping.poke();
  });
  following.from.catch(settings.onError);
  return {
    onFired: noticesOfTimers(channels, settings.clock),
    sweep: keeping.sweep,
    async stop() {
      following.stop();
      await keeping.stop();
    },
  };
}
