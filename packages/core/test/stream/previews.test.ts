/** Argument previews reach the gate at most once per interval, and only when they changed. */
import { describe, expect, it } from 'vitest';
import type { StreamGate } from '../../src/gate/stream-gate.ts';
import { createPreviews } from '../../src/stream/previews.ts';
import { createSlot, type Slot } from '../../src/stream/slot.ts';
import { createFakeClock } from '@toolgate/test-utils';

function setup() {
  const published: unknown[] = [];
  const gate = {
    stream: { preview: (_id: string, value: unknown) => published.push(value) },
  } as unknown as StreamGate;
  const clock = createFakeClock();
  const previews = createPreviews(gate, clock, 50);
  const slot = createSlot('k', 0, 0, 64);
  slot.phase = 'open';
  slot.callIds = ['c1'];
  const feed = (slot: Slot, text: string) => {
    slot.parts.push(text);
    previews.schedule(slot);
  };
  return { published, clock, previews, slot, feed };
}

describe('previews', () => {
  it('publish the first preview at once, then what stands at the end of each interval', () => {
    const { published, clock, slot, feed } = setup();
    feed(slot, '{"q":"r');
    expect(published).toEqual([{ q: 'r' }]);
    feed(slot, 'a');
    feed(slot, 't');
    expect(published).toHaveLength(1);
    clock.advance(50);
    expect(published).toEqual([{ q: 'r' }, { q: 'rat' }]);
    expect(clock.pending).toBe(0);
  });

  it('publish nothing for a call that is not open, has no id, or has no text yet', () => {
    const { published, previews, slot } = setup();
    previews.schedule(slot);
    slot.parts.push('{"a":1');
    slot.callIds = [];
    previews.publish(slot);
    slot.callIds = ['c1'];
    slot.phase = 'ended';
    previews.publish(slot);
    expect(published).toEqual([]);
  });

  it('drop a publish that is due when the call closes', () => {
    const { published, clock, previews, slot, feed } = setup();
    feed(slot, '{"a":1');
    feed(slot, ',"b":2');
    previews.clear(slot);
    clock.advance(100);
    expect(published).toEqual([{ a: 1 }]);
    expect(slot.timer).toBeUndefined();
  });

  it('read a preview the reader builds itself, and skip one that did not change', () => {
    const { published, clock, previews, slot } = setup();
    const built = { items: ['x'] };
    slot.read = () => built;
    previews.schedule(slot);
    clock.advance(50);
    previews.schedule(slot);
    clock.advance(50);
    expect(published).toEqual([built]);
  });
});
