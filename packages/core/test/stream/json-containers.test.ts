/** The open arrays and objects of a partial JSON value, and the copies a preview shows of them. */
import { describe, expect, it } from 'vitest';
import { createJsonContainers } from '../../src/stream/json-containers.ts';

const NONE = Symbol('none');

describe('json containers', () => {
  it('nest values into the innermost container and answer each one as it closes', () => {
    const open = createJsonContainers(8);
    open.open(false);
    open.setKey('items');
    open.open(true);
    expect(open.add(1)).toBe(true);
    expect(open.innermost()).toMatchObject({ array: true, size: 1 });
    const items = open.close(true, NONE);
    expect(items).toEqual([1]);
    open.add(items);
    expect(open.close(false, NONE)).toEqual({ items: [1] });
    expect(open.innermost()).toBeUndefined();
    expect(open.add('root')).toBe(false);
  });

  it('refuse to close a container of the other kind, or to open past the depth limit', () => {
    const open = createJsonContainers(2);
    expect(open.open(true)).toBe(true);
    expect(open.close(false, NONE)).toBe(NONE);
    expect(open.open(false)).toBe(true);
    expect(open.open(true)).toBe(false);
  });

  it('snapshot copies only the open containers, sharing what finished inside them, with the value so far in place', () => {
    const open = createJsonContainers(8);
    open.open(false);
    open.setKey('done');
    const done = { a: [1] };
    open.add(done);
    open.setKey('open');
    const first = open.snapshot('ab', NONE) as Record<string, unknown>;
    expect(first).toEqual({ done: { a: [1] }, open: 'ab' });
    expect(first['done']).toBe(done);
    const second = open.snapshot(NONE, NONE);
    expect(second).toEqual({ done: { a: [1] } });
    expect(second).not.toBe(first);
  });

  it('keep __proto__ as an own key, as JSON.parse does', () => {
    const open = createJsonContainers(8);
    open.open(false);
    open.setKey('__proto__');
    open.add({ polluted: true });
    const value = open.close(false, NONE) as Record<string, unknown>;
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
});
