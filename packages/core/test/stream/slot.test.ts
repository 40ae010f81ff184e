/** One streamed call's arguments as they arrive: fragments, what is read of them, what the provider gives whole. */
import { describe, expect, it } from 'vitest';
import {
  argumentsOf,
  createSlot,
  inputAsRead,
  isWhole,
  provideWhole,
  rawOf,
  readJson,
  type Slot,
} from '../../src/stream/slot.ts';

function fed(...fragments: string[]): Slot {
  const slot = createSlot('k', 0, 0, 64);
  for (const fragment of fragments) {
    slot.parts.push(fragment);
    slot.length += fragment.length;
  }
  return slot;
}

describe('a streamed call’s slot', () => {
  it('reads the fragments that came since the last read as one batch, and keeps them as one string', () => {
    const slot = fed('{"q":', '"ra', 'tes"');
    expect(readJson(slot)?.preview()).toEqual({ q: 'rates' });
    expect(slot.parts).toEqual(['{"q":"rates"']);
    slot.parts.push('}');
    expect(readJson(slot)?.state()).toBe('complete');
    expect(slot.parts).toEqual(['{"q":"rates"', '}']);
    expect(rawOf(slot)).toBe('{"q":"rates"}');
    expect(slot.parts).toEqual(['{"q":"rates"}']);
  });

  it('is whole only when its JSON is closed, or the provider gave a value that is not text', () => {
    const open = fed('{"q":"rat');
    expect(isWhole(open)).toBe(false);
    expect(isWhole(fed('{"q":"rates"}'))).toBe(true);
    provideWhole(open, { q: 'rates' }, 64);
    expect(isWhole(open)).toBe(true);
    expect(argumentsOf(open)).toEqual({ q: 'rates' });
  });

  it('takes the provider’s final text over the fragments, and reads it afresh', () => {
    const slot = fed('{"q":"ra');
    readJson(slot);
    provideWhole(slot, '{"q":"rates","n":2}', 64);
    expect(slot.parts).toEqual(['{"q":"rates","n":2}']);
    expect(isWhole(slot)).toBe(true);
    expect(readJson(slot)?.preview()).toEqual({ q: 'rates', n: 2 });
    expect(argumentsOf(slot)).toBe('{"q":"rates","n":2}');
  });

  it('reads the arguments as far as they go for a replay, and anything not an object as {}', () => {
    expect(inputAsRead('{"path":"a.md","content":"Hel', 64)).toEqual({ path: 'a.md', content: 'Hel' });
    expect(inputAsRead('[1,2]', 64)).toEqual({});
    expect(inputAsRead('', 64)).toEqual({});
    expect(inputAsRead({ given: true }, 64)).toEqual({ given: true });
  });
});
