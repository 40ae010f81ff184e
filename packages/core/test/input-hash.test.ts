import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/kit.ts';
import { inputHash } from '../src/index.ts';

describe('inputHash', () => {
  it('is the SHA-256 of the RFC 8785 canonical JSON', async () => {
    const input = { currency: 'USD', amount_cents: 2000, to: 'alice@example.com' };
    const canonical = '{"amount_cents":2000,"currency":"USD","to":"alice@example.com"}';
    expect(canonicalJson(input)).toBe(canonical);
    expect(await inputHash(input)).toBe(createHash('sha256').update(canonical).digest('hex'));
  });

  it('gives equal values one hash whatever their key order, and different values different hashes', async () => {
    expect(await inputHash({ a: 1, b: [1, { d: 2, c: 3 }] })).toBe(
      await inputHash({ b: [1, { c: 3, d: 2 }], a: 1 }),
    );
    expect(await inputHash({ amount_cents: 2000 })).not.toBe(await inputHash({ amount_cents: 2001 }));
    expect(await inputHash({ amount_cents: 2000 })).not.toBe(await inputHash({ amount_cents: '2000' }));
  });

  it('writes numbers and strings as RFC 8785 does', () => {
    // Examples from RFC 8785, appendix B and section 3.2.2.
    expect(canonicalJson({ n: 1e21, m: 1e-7, z: -0, u: '\u20ac$\u000f\u000aA\'B"\\\\"/' })).toBe(
      '{"m":1e-7,"n":1e+21,"u":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/","z":0}',
    );
  });

  it('refuses what JSON cannot carry', () => {
    expect(() => canonicalJson(undefined)).toThrow(/no JSON form/);
    expect(() => canonicalJson({ n: Number.POSITIVE_INFINITY })).toThrow();
  });
});
