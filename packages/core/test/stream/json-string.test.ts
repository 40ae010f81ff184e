/** One JSON string as it arrives: where it ends, what it decodes to, and what a preview may show. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createJsonString } from '../../src/stream/json-string.ts';

describe('json string', () => {
  it('finds the closing quote past escaped quotes and backslash runs, even when they are split across fragments', () => {
    const text = createJsonString();
    expect(text.read('a\\', 0)).toBe(-1);
    expect(text.read('"b\\\\', 0)).toBe(-1);
    expect(text.read('" tail', 0)).toBe(0);
    expect(text.finish()).toBe('a"b\\');
  });

  it('reads from an offset, and is ready for the next string once finished', () => {
    const text = createJsonString();
    expect(text.read('{"key":', 2)).toBe(5);
    expect(text.finish()).toBe('key');
    expect(text.read('x"', 0)).toBe(1);
    expect(text.finish()).toBe('x');
  });

  it('answers undefined for escapes JSON does not allow', () => {
    const text = createJsonString();
    text.read('bad \\q"', 0);
    expect(text.finish()).toBeUndefined();
  });

  it('previews never end in half an escape or half a surrogate pair', () => {
    const text = createJsonString();
    text.read('caf\\u00', 0);
    expect(text.preview()).toBe('caf');
    text.read('e9 \\ud83d', 0);
    expect(text.preview()).toBe('café ');
    text.read('\\ude00', 0);
    expect(text.preview()).toBe('café 😀');
    text.read('"', 0);
    expect(text.finish()).toBe('café 😀');
  });

  it('decodes any string, cut into any pieces, with previews in between, to what JSON.stringify wrote', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.integer({ min: 1, max: 7 }), (value, size) => {
        const body = JSON.stringify(value).slice(1);
        const text = createJsonString();
        let end = -1;
        for (let i = 0; i < body.length && end === -1; i += size) {
          const at = text.read(body.slice(i, i + size), 0);
          if (at !== -1) end = i + at;
          else expect(value.startsWith(text.preview() ?? '\u0000')).toBe(true);
        }
        expect(end).toBe(body.length - 1);
        expect(text.finish()).toBe(value);
      }),
      { numRuns: 300 },
    );
  });
});
