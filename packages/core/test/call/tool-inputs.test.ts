/** The record keeps one frozen input; the tool runs with a copy of its own. */
import { describe, expect, it } from 'vitest';
import { createToolInputs } from '../../src/call/steps/tool-inputs.ts';

describe('tool inputs', () => {
  it('freeze a value the gate made in place, and give the tool a copy it may change', () => {
    const inputs = createToolInputs();
    const parsed = { items: [3, 1, 2] };
    const input = inputs.keep(parsed, true) as typeof parsed;
    expect(input).toBe(parsed);
    expect(Object.isFrozen(input) && Object.isFrozen(input.items)).toBe(true);
    const mine = inputs.take(input) as typeof parsed;
    expect(mine).not.toBe(input);
    expect(mine).toEqual({ items: [3, 1, 2] });
    mine.items.sort();
    mine.items.push(4);
    expect(input.items).toEqual([3, 1, 2]);
  });

  it('freeze and copy, in the walk they share, nesting deeper than a recursive walk goes and a __proto__ key', () => {
    const inputs = createToolInputs();
    const deep = '{"next":'.repeat(5_000) + '{"leaf":[1]}' + '}'.repeat(5_000);
    const parsed = JSON.parse(`{"__proto__":{"polluted":true},"deep":${deep}}`) as Record<string, unknown>;
    const input = inputs.keep(parsed, true) as Record<string, unknown>;
    const mine = inputs.take(input) as Record<string, unknown>;
    expect(Object.hasOwn(mine, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(mine)).toBe(Object.prototype);
    expect(mine['__proto__']).toEqual({ polluted: true });
    let frozen: unknown = input['deep'];
    let copied: unknown = mine['deep'];
    for (let i = 0; i < 5_000; i++) {
      expect(Object.isFrozen(frozen)).toBe(true);
      expect(Object.isFrozen(copied)).toBe(false);
      frozen = (frozen as { next: unknown }).next;
      copied = (copied as { next: unknown }).next;
    }
    expect(copied).toEqual({ leaf: [1] });
    expect(Object.isFrozen((frozen as { leaf: unknown }).leaf)).toBe(true);
  });

  it('copy a value someone else still holds before freezing it', () => {
    const inputs = createToolInputs();
    const answered = { amount: 5 };
    const input = inputs.keep(answered, false);
    expect(input).not.toBe(answered);
    expect(Object.isFrozen(input)).toBe(true);
    expect(Object.isFrozen(answered)).toBe(false);
    answered.amount = 6;
    expect(input).toEqual({ amount: 5 });
  });

  it('hand the kept copy out once; after that each take is a new copy of the record’s', () => {
    const inputs = createToolInputs();
    const input = inputs.keep({ a: { b: 1 } }, true);
    const first = inputs.take(input);
    const second = inputs.take(input);
    expect(second).not.toBe(first);
    expect(second).toEqual({ a: { b: 1 } });
    expect(Object.isFrozen(second)).toBe(false);
  });

  it('pass values that are not objects through, and throw for one that cannot be read', () => {
    const inputs = createToolInputs();
    expect(inputs.take(inputs.keep('text', true))).toBe('text');
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('revoked');
        },
      },
    );
    expect(() => inputs.keep(hostile, false)).toThrow('revoked');
  });
});
