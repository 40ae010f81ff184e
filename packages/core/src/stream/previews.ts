import type { Clock } from '../call/clock.ts';
import type { StreamGate } from '../gate/stream-gate.ts';
import { readJson, type Slot } from './slot.ts';

/**
 * Publishes each open call's argument preview to the gate, at most once per interval: a UI cannot
 * show more frames than that, and each publish copies the parts of the preview that changed.
 *
 * @example
 * const previews = createPreviews(gate, clock, 50);
 * previews.schedule(slot); // at once, or when the interval since the last publish is over
 */
export interface Previews {
  /** A preview is due: publish now if the interval is over, else once it is (one timer per call). */
  readonly schedule: (slot: Slot) => void;
  /** Publishes the preview as it stands now, if it changed. */
  readonly publish: (slot: Slot) => void;
  /** Drops a publish that is due (the call is closing). */
  readonly clear: (slot: Slot) => void;
}

/**
 * Creates the previewer for one turn.
 *
 * @example
 * const previews = createPreviews(gate, options.clock ?? systemClock, options.previewIntervalMs ?? 50);
 */
export function createPreviews(gate: StreamGate, clock: Clock, interval: number): Previews {
  function publish(slot: Slot, now = clock.now()): void {
    const id = slot.callIds[0];
    if (slot.phase !== 'open' || id === undefined) return;
    const json = readJson(slot);
    if (slot.read === undefined && (json === undefined || json.state() === 'empty')) return;
    slot.lastPreviewAt = now;
    const value = slot.read === undefined ? json?.preview() : slot.read();
    if (value === slot.lastPreview) return;
    slot.lastPreview = value;
    gate.stream.preview(id, value);
  }

  return {
    publish: (slot) => publish(slot),
    schedule(slot) {
      // A publish is already due: it will read the preview as it stands then.
      if (slot.timer !== undefined || slot.phase !== 'open') return;
      const now = clock.now();
      const wait = interval - (now - slot.lastPreviewAt);
      if (wait <= 0) publish(slot, now);
      else {
        slot.timer = clock.setTimeout(() => {
          slot.timer = undefined;
          publish(slot);
        }, wait);
      }
    },
    clear(slot) {
      if (slot.timer !== undefined) {
        clock.clearTimeout(slot.timer);
        slot.timer = undefined;
      }
    },
  };
}
