import { createHmac } from 'node:crypto';
import { canonicalJson } from '@toolgate/core/kit';
import { inputHash } from '@toolgate/core';
import { createFakeClock } from '@toolgate/test-utils';
import { describe, expect, it } from 'vitest';
import { approvalLinks } from '../../src/index.ts';

const SECRET = 'k'.repeat(32);
const BASE = 'https://app.example/api/toolgate';
const HASH = 'a'.repeat(64);

function setup(ttlMs?: number) {
  const clock = createFakeClock();
  const links = approvalLinks({
    secret: SECRET,
    baseUrl: BASE,
    clock,
    ...(ttlMs === undefined ? {} : { ttlMs }),
  });
  return { clock, links };
}

/** The token with one character of it replaced by another base64url character. */
function changed(token: string, at: number): string {
  const char = token[at] === 'A' ? 'B' : 'A';
  return token.slice(0, at) + char + token.slice(at + 1);
}

describe('approvalLinks', () => {
  it('refuses a secret shorter than 32 bytes when it is made, saying how to make one', () => {
    expect(() => approvalLinks({ secret: 'short', baseUrl: BASE })).toThrow(
      /`secret` is 5 bytes; it must be at least 32 .*openssl rand -base64 32/,
    );
    expect(() => approvalLinks({ secret: new Uint8Array(31), baseUrl: BASE })).toThrow(/31 bytes/);
    expect(() => approvalLinks({ secret: new Uint8Array(32), baseUrl: BASE })).not.toThrow();
  });

  it('refuses a base URL that is not absolute http(s), and a ttlMs that is not positive', () => {
    expect(() => approvalLinks({ secret: SECRET, baseUrl: '/api/toolgate' })).toThrow(/absolute public URL/);
    expect(() => approvalLinks({ secret: SECRET, baseUrl: 'javascript:alert(1)' })).toThrow(/absolute/);
    expect(() => approvalLinks({ secret: SECRET, baseUrl: BASE, ttlMs: 0 })).toThrow(/`ttlMs`/);
  });

  it('makes a link under the base URL whose token gives back the call, the principal, the input hash and the expiry', async () => {
    const { clock, links } = setup(60_000);
    const call = { id: 'w1', input: { iban: 'DE02', amount_cents: 500_000 } };
    const url = links.linkFor(call, 'manager_1');
    expect(url.startsWith(`${BASE}/links/`)).toBe(true);
    const token = url.slice(`${BASE}/links/`.length);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(links.verify(token)).toEqual({
      ok: true,
      claims: {
        callId: 'w1',
        principal: 'manager_1',
        inputHash: await inputHash(call.input),
        expiry: clock.now() + 60_000,
      },
    });
    // A trailing slash on the base is not doubled.
    const slashed = approvalLinks({ secret: SECRET, baseUrl: `${BASE}/` });
    expect(slashed.urlOf(token)).toBe(`${BASE}/links/${token}`);
  });

  it('signs the canonical JSON of the claims with HMAC-SHA256, so the token is the same behind any host', () => {
    const { links } = setup();
    const token = links.sign({
      callId: 'w1',
      principal: 'manager_1',
      inputHash: HASH,
      expiry: 1_800_000_000_000,
    });
    const claims = { callId: 'w1', expiry: 1_800_000_000_000, inputHash: HASH, principal: 'manager_1' };
    const payload = canonicalJson(claims);
    const mac = createHmac('sha256', SECRET)
      .update(`toolgate.approval-link.v1\n${payload}`)
      .digest('base64url');
    expect(token).toBe(`${Buffer.from(payload).toString('base64url')}.${mac}`);
    const behindProxy = approvalLinks({ secret: SECRET, baseUrl: 'http://10.0.0.7:3000/toolgate' });
    expect(behindProxy.verify(token)).toMatchObject({ ok: true, claims: { callId: 'w1' } });
  });

  it('refuses every changed byte, a truncated token, a token signed with another secret and one made up', () => {
    const { links } = setup();
    const token = links.sign({ callId: 'w1', principal: 'manager_1', inputHash: HASH });
    const invalid = { ok: false, code: 'invalid_link' };
    for (let at = 0; at < token.length; at++) {
      if (token[at] === '.') continue;
      expect(links.verify(changed(token, at)), `character ${at} changed`).toMatchObject(invalid);
    }
    expect(links.verify(token.slice(0, -1))).toMatchObject(invalid);
    expect(links.verify(token.slice(0, token.indexOf('.')))).toMatchObject(invalid);
    expect(links.verify(token.slice(1))).toMatchObject(invalid);
    const other = approvalLinks({ secret: 'o'.repeat(32), baseUrl: BASE });
    expect(links.verify(other.sign({ callId: 'w1', principal: 'manager_1', inputHash: HASH }))).toMatchObject(
      invalid,
    );
    // Claims changed to another principal, re-encoded, with the old signature.
    const [, signature] = token.split('.');
    const forged = Buffer.from(
      canonicalJson({ callId: 'w1', expiry: 9_999_999_999_999, inputHash: HASH, principal: 'mallory' }),
    ).toString('base64url');
    expect(links.verify(`${forged}.${signature}`)).toMatchObject(invalid);
    for (const junk of ['', '.', 'abc', `${'A'.repeat(5000)}.${signature}`, 42, null, undefined])
      expect(links.verify(junk)).toMatchObject(invalid);
  });

  it('answers link_expired with the claims once the clock reaches the expiry, and not a millisecond before', () => {
    const { clock, links } = setup(1000);
    const token = links.sign({ callId: 'w1', principal: 'manager_1', inputHash: HASH });
    clock.advance(999);
    expect(links.verify(token)).toMatchObject({ ok: true });
    clock.advance(1);
    expect(links.verify(token)).toEqual({
      ok: false,
      code: 'link_expired',
      message: `this link expired at ${new Date(clock.now()).toISOString()}`,
      claims: { callId: 'w1', principal: 'manager_1', inputHash: HASH, expiry: clock.now() },
    });
  });

  it('refuses to make a link for a record without an input, and claims that could not be kept', () => {
    const { links } = setup();
    expect(() => links.linkFor({ id: 'r1', input: undefined }, 'manager_1')).toThrow(/no validated input/);
    expect(() => links.sign({ callId: '', principal: 'manager_1', inputHash: HASH })).toThrow(TypeError);
    expect(() => links.sign({ callId: 'w1', principal: 'a\u0000b', inputHash: HASH })).toThrow(TypeError);
    expect(() => links.sign({ callId: 'w1', principal: 'manager_1', inputHash: 'nope' })).toThrow(TypeError);
    expect(() => links.sign({ callId: 'c'.repeat(6000), principal: 'manager_1', inputHash: HASH })).toThrow(
      /too long for a URL/,
    );
    // The longest token it makes, it takes back.
    const long = links.sign({ callId: 'c'.repeat(5000), principal: 'manager_1', inputHash: HASH });
    expect(links.verify(long)).toMatchObject({ ok: true, claims: { callId: 'c'.repeat(5000) } });
  });
});
