import type { LedgerMove } from '../ledger/ledger.ts';
import type { GateParts } from '../gate/parts.ts';
import type { OnFired } from '../timers/fire.ts';
import { keepNotices } from './notice-keeping.ts';
import { noticesOfTimers } from './notice-watch.ts';

/** Codes of events that write no notice: a delivery's own events. */
const QUIET = new Set(['notice_delivered', 'notice_failed']);

/**
 * A gate's notices: delivered by this process whenever it commits a move that may have written
 * some (a call asked, reminded, escalated, decided or expired) or hears another process commit,
 * and written by its timers through `onFired`.
 *
 * @example
 * const notices = gateNotices(parts);
 * const timers = keepTimers(parts, { running, onFired: notices?.onFired });
 */
export function gateNotices(
  parts: Pick<GateParts, 'options' | 'settings' | 'channels' | 'ledger' | 'life' | 'settling'>,
):
  | {
      readonly onFired: OnFired;
      readonly sweep: () => Promise<void>;
      readonly stop: () => Promise<void>;
    }
  | undefined {
  const { channels, settings } = parts;
  if (channels.length === 0) return undefined;
  const keeping = keepNotices(parts, channels, parts.settling);
  // The ledger's own word on commits, not the tail: a delivery's events carry no record, so the
  // tail would read them back from the database after each one only to learn nothing was asked.
  let ownSeq = 0;
  const stopHearing = parts.ledger.onCommitted((committed) => {
    if (!Array.isArray(committed)) {
      // Another process committed (or may have): what it wrote may be due here once its claim runs out.
      if (typeof committed !== 'number' || committed > ownSeq) keeping.poke();
      return;
    }
    const moves = committed as readonly LedgerMove[];
    ownSeq = Math.max(ownSeq, moves.at(-1)?.event.seq ?? 0);
    parts.settling.committed(moves.map(({ event }) => event));
    const waits = moves.some(
      ({ event }) =>
        (event.from === 'awaiting_approval' || event.to === 'awaiting_approval') &&
        !QUIET.has(event.reason?.code ?? ''),
    );
    if (waits) keeping.poke();
  });
  return {
    onFired: noticesOfTimers(channels, settings),
    sweep: keeping.sweep,
    async stop() {
      stopHearing();
      await keeping.stop();
    },
  };
}
