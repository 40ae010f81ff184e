import type { GateParts } from '../gate/parts.ts';
import type { OnFired } from '../timers/fire.ts';
import { keepNotices } from './notice-keeping.ts';
import { noticesOfTimers } from './notice-watch.ts';

/** How often, at most, another process's commits make this one look when a notice is next due. */
const HEAR_MS = 100;

/**
 * A gate's notices: those this process writes (a call asked, decided or expired, in the move's
 * transaction; reminded or escalated, by its timers through `onFired`) delivered by it once they
 * commit, and any other due here when another process's claim on it ran out.
 *
 * @example
 * const notices = gateNotices(parts);
 * const timers = keepTimers(parts, { running, onFired: notices?.onFired });
 */
export function gateNotices(
  parts: Pick<
    GateParts,
    'options' | 'settings' | 'channels' | 'ledger' | 'life' | 'settling' | 'freshNotices'
  >,
):
  | {
      readonly onFired: OnFired;
      readonly sweep: () => Promise<void>;
      readonly stop: () => Promise<void>;
    }
  | undefined {
  const { channels, settings } = parts;
  if (channels.length === 0) return undefined;
  const keeping = keepNotices(parts, channels, parts.settling, parts.freshNotices);
  // The ledger's own word on commits, not the tail: a delivery's events carry no record, so the
  // tail would read them back from the database after each one.
  let hearing: ReturnType<typeof setTimeout> | undefined;
  const stopHearing = parts.ledger.onCommitted((committed) => {
    // A commit of this process may be one that wrote notices, claimed: they are delivered now.
    keeping.fresh();
    if (Array.isArray(committed) || hearing !== undefined) return;
    // Another process committed (or may have): a notice it claimed is due here once that claim
    // runs out. Looked up at most every HEAR_MS, however many commits there are.
    hearing = setTimeout(() => {
      hearing = undefined;
      keeping.heard();
    }, HEAR_MS);
    hearing.unref?.();
  });
  return {
    onFired: noticesOfTimers(channels, settings, parts.freshNotices),
    sweep: keeping.sweep,
    async stop() {
      stopHearing();
      if (hearing !== undefined) clearTimeout(hearing);
      await keeping.stop();
    },
  };
}
