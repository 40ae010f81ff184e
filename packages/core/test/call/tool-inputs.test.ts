/** The record keeps one deeply frozen input, and the tool runs with that same value. */
import { describe, expect, it } from 'vitest';
import { readArguments } from '../../src/proposal/arguments.ts';
import { DEFAULT_LIMITS } from '../../src/proposal/limits.ts';
import { createToolInputs, frozenInputHint } from '../../src/call/steps/tool-inputs.ts';

function read(raw: unknown, limits = DEFAULT_LIMITS): Record<string, unknown> {
  const reading = readArguments(raw, limits, []);
  if (!reading.ok) throw new Error(reading.reason.message);
  return reading.value;
}

describe('tool inputs', () => {
  it('give the tool the very value the gate read, frozen all the way down by the walk that checked it', () => {
    const inputs = createToolInputs();
    const parsed = read('{"items":[3,1,2],"to":{"city":"Oslo"}}') as { items: number[]; to: object };
    const input = inputs.keep(parsed, true) as typeof parsed;
    expect(input).toBe(parsed);
    expect(Object.isFrozen(input) && Object.isFrozen(input.items) && Object.isFrozen(input.to)).toBe(true);
    const mine = inputs.take(input) as typeof parsed;
    expect(mine).toBe(input);
    expect(() => mine.items.sort()).toThrow(TypeError);
    expect(() => mine.items.push(4)).toThrow(TypeError);
    expect(input.items).toEqual([3, 1, 2]);
  });

  it('freeze, in that walk, arguments nesting deeper than a recursive walk goes, and a copy of arguments a provider sent as an object', () => {
    const deep = '{"next":'.repeat(5_000) + '{"leaf":[1]}' + '}'.repeat(5_000);
    const parsed = read(`{"deep":${deep}}`, { maxArgumentChars: 1e6, maxDepth: 10_000 });
    let node: unknown = parsed['deep'];
    for (let i = 0; i < 5_000; i++) {
      expect(Object.isFrozen(node)).toBe(true);
      node = (node as { next: unknown }).next;
    }
    expect(Object.isFrozen((node as { leaf: unknown }).leaf)).toBe(true);

    const sent = { items: [{ sku: 'a' }] };
    const copied = read(sent) as typeof sent;
    expect(copied).not.toBe(sent);
    expect(copied).toEqual(sent);
    expect(Object.isFrozen(copied) && Object.isFrozen(copied.items) && Object.isFrozen(copied.items[0])).toBe(
      true,
    );
    expect(Object.isFrozen(sent) || Object.isFrozen(sent.items)).toBe(false);
    expect(Object.isFrozen(read(undefined))).toBe(true);
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

  it('hand a tool a frozen copy of an input the gate did not read itself (a validator’s answer, a stored record)', () => {
    const inputs = createToolInputs();
    const input = inputs.keep({ a: { b: 1 } }, false);
    const first = inputs.take(input);
    expect(first).not.toBe(input);
    expect(first).toEqual({ a: { b: 1 } });
    expect(Object.isFrozen(first) && Object.isFrozen((first as { a: object }).a)).toBe(true);
    const stored = { a: { b: 2 } };
    const taken = inputs.take(stored);
    expect(taken).toEqual(stored);
    expect(Object.isFrozen(taken)).toBe(true);
    expect(Object.isFrozen(stored)).toBe(false);
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

  it('say how to change an input only for an error that is a write to a frozen object', () => {
    const frozen = Object.freeze({ qty: 1 });
    let error: unknown;
    try {
      (frozen as { qty: number }).qty = 2;
    } catch (thrown) {
      error = thrown;
    }
    expect(frozenInputHint(error)).toContain('structuredClone(input)');
    expect(frozenInputHint(new TypeError('x is not a function'))).toBe('');
    expect(frozenInputHint(new Error('read only replica'))).toBe('');
  });
});
