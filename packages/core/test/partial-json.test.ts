import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPartialJson } from '../src/stream/partial-json.ts';

function feed(text: string, size: number) {
  const json = createPartialJson();
  for (let i = 0; i < text.length; i += size) json.push(text.slice(i, i + size));
  return json;
}

describe('createPartialJson', () => {
  it('previews an object as it arrives: the open string so far, keys without a value left out', () => {
    const json = createPartialJson();
    json.push('{"path":"notes.md","content":"# Quar');
    expect(json.preview()).toEqual({ path: 'notes.md', content: '# Quar' });
    expect(json.state()).toBe('open');
    json.push('terly", "tags": ["a", "b');
    expect(json.preview()).toEqual({ path: 'notes.md', content: '# Quarterly', tags: ['a', 'b'] });
    json.push('"], "pa');
    expect(json.preview()).toEqual({ path: 'notes.md', content: '# Quarterly', tags: ['a', 'b'] });
    json.push('ge": 12');
    expect(json.preview()).toMatchObject({ page: 12 });
    json.push('}');
    expect(json.state()).toBe('complete');
  });

  it('decodes escapes and surrogate pairs split across fragments, and never shows half a character', () => {
    const json = createPartialJson();
    json.push('{"s":"a\\');
    expect(json.preview()).toEqual({ s: 'a' });
    json.push('n\\u00');
    json.push('e9 \\ud83d');
    expect(json.preview()).toEqual({ s: 'a\né ' });
    json.push('\\ude00"}');
    expect(json.preview()).toEqual({ s: 'a\né 😀' });
  });

  it('keeps finished parts identical between previews and returns the same preview while nothing changed', () => {
    const json = createPartialJson();
    json.push('{"done":{"a":[1,2]},"open":"x');
    const first = json.preview() as { done: unknown };
    expect(json.preview()).toBe(first);
    json.push('yz');
    const second = json.preview() as { done: unknown; open: string };
    expect(second).not.toBe(first);
    expect(second.done).toBe(first.done);
    expect(second.open).toBe('xyz');
  });

  it('reads __proto__ as an ordinary key, as JSON.parse does, without touching any prototype', () => {
    const json = feed('{"__proto__":{"polluted":true},"a":1}', 3);
    const value = json.preview() as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('says trailing for text after a whole value, and invalid for text JSON forbids', () => {
    expect(feed('{"a":1}{"b":2}', 4).state()).toBe('trailing');
    expect(feed('{"a":1}\n```', 4).state()).toBe('trailing');
    expect(feed('{"a":tru e}', 2).state()).toBe('invalid');
    expect(feed('{"a":1,}', 2).state()).toBe('invalid');
    expect(feed('[1,]', 1).state()).toBe('invalid');
    expect(feed('{"a":[],"b":{}}', 1).state()).toBe('complete');
    expect(feed('   ', 1).state()).toBe('empty');
  });

  it('stops at maxDepth instead of growing a stack', () => {
    const json = createPartialJson({ maxDepth: 64 });
    json.push('['.repeat(100_000));
    expect(json.state()).toBe('too_deep');
  });

  it('ends, for any JSON object or array split anywhere, with exactly what JSON.parse reads', () => {
    // A number at the top level never ends inside a stream (more digits may follow), so the values are containers.
    const container = fc.oneof(
      fc.array(fc.jsonValue({ maxDepth: 3 })),
      fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })),
    );
    fc.assert(
      fc.property(
        container,
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom(undefined, 2),
        (value, size, indent) => {
          const text = JSON.stringify(value, null, indent);
          const json = feed(text, size);
          expect(json.state()).toBe('complete');
          expect(json.preview()).toStrictEqual(JSON.parse(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('shows, at every cut of an object, only values the whole object holds (strings as prefixes)', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean())),
        fc.nat(),
        (object, cutAt) => {
          const text = JSON.stringify(object);
          const json = createPartialJson();
          json.push(text.slice(0, cutAt % (text.length + 1)));
          const preview = json.preview() as Record<string, unknown> | undefined;
          for (const [key, shown] of Object.entries(preview ?? {})) {
            const whole = object[key];
            if (typeof shown === 'string')
              expect(typeof whole === 'string' && whole.startsWith(shown)).toBe(true);
            else if (typeof shown === 'number') expect(String(whole).startsWith(String(shown))).toBe(true);
            else expect(shown).toBe(whole);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never throws on any text, whole or in pieces', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' })), (pieces) => {
        const json = createPartialJson();
        for (const piece of pieces) json.push(piece);
        json.preview();
        expect(['empty', 'open', 'complete', 'trailing', 'invalid', 'too_deep']).toContain(json.state());
      }),
    );
  });
});
