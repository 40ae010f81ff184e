import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson, systemClock } from '@toolgate/core/kit';
import { type Clock, type ToolCallRecord } from '@toolgate/core';
import { storable } from '../ledger/guards/storable.ts';
import { hashInput } from '../keeper/row-columns.ts';

/**
 * What an approval link's token stands for: one call, one principal, the hash of the input they
 * are shown, and when the link stops working (milliseconds since the epoch).
 *
 * @example
 * const claims: LinkClaims = { callId: 'w1', principal: 'manager_1', inputHash, expiry: Date.now() + 3_600_000 };
 */
export interface LinkClaims {
  readonly callId: string;
  readonly principal: string;
  readonly inputHash: string;
  readonly expiry: number;
}

/**
 * What checking a token found: its claims, or why it is not a link to trust. `invalid_link` (a
 * token this server did not sign, changed, cut short or malformed) says nothing about any call;
 * `link_expired` was signed here, so its claims name the call it was for.
 *
 * @example
 * const checked = links.verify(token);
 * if (!checked.ok) return page(checked.code === 'link_expired' ? 410 : 403, checked.message);
 */
export type LinkCheck =
  | { readonly ok: true; readonly claims: LinkClaims }
  | { readonly ok: false; readonly code: 'invalid_link'; readonly message: string }
  | {
      readonly ok: false;
      readonly code: 'link_expired';
      readonly message: string;
      readonly claims: LinkClaims;
    };

/**
 * What {@link approvalLinks} takes.
 *
 * @example
 * const options: ApprovalLinksOptions = { secret: process.env.TOOLGATE_LINK_SECRET!, baseUrl: 'https://app.example/api/toolgate' };
 */
export interface ApprovalLinksOptions {
  /** At least 32 bytes (a string counts its UTF-8 bytes): `openssl rand -base64 32` makes one. Keep it out of the code. */
  readonly secret: string | Uint8Array;
  /** The handler's public base, as a person's browser reaches it (`https://app.example/api/toolgate`). */
  readonly baseUrl: string;
  /** How long a link works after it is made, in milliseconds (default 24 h). The call's own approval may expire first. */
  readonly ttlMs?: number;
  /** The clock expiries are read on (default: the system's). */
  readonly clock?: Clock;
}

/**
 * Signed approval links: each one is the credential of one principal for one call and one input.
 * Pass the same object to `createServerGate({ links })` (so that `serverGate.linkFor` and notices
 * can make links) and to `toolgateHandler(gate, { links })` (which serves them).
 *
 * @example
 * const url = links.linkFor(call, 'manager_1'); // https://app.example/api/toolgate/links/eyJ…
 */
export interface ApprovalLinks {
  /** The handler's public base, without a trailing slash. */
  readonly baseUrl: string;
  readonly ttlMs: number;
  /** A token for these claims (`expiry` defaults to `ttlMs` from now). */
  readonly sign: (claims: Omit<LinkClaims, 'expiry'> & { readonly expiry?: number }) => string;
  /** Checks a token's signature (in constant time) and expiry; never throws. */
  readonly verify: (token: unknown) => LinkCheck;
  /** `${baseUrl}/links/${token}`. */
  readonly urlOf: (token: string) => string;
  /**
   * The link for a principal to decide a call, bound to the hash of the input the call holds now.
   * Throws a `TypeError` for a record without a validated input (nothing could be approved), and
   * for a call id or principal so long that the token would pass 8,192 characters. Any
   * principal can be named: whether they may decide is the gate's word when they vote.
   */
  readonly linkFor: (call: Pick<ToolCallRecord, 'id' | 'input'>, principal: string) => string;
}

const MIN_SECRET_BYTES = 32;
const DAY = 24 * 60 * 60 * 1000;
/** Ties a signature to this use of the secret: an HMAC the app makes with it for anything else is never a link. */
const PURPOSE = 'toolgate.approval-link.v1\n';
/** Longer tokens are refused before any work (a real one is a few hundred characters), and never made: many servers refuse longer URLs. */
const MAX_TOKEN = 8192;
const TOKEN = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

/**
 * Makes signed approval links: HMAC-SHA256 (node:crypto) over the canonical JSON of the claims
 * `{ callId, principal, inputHash, expiry }`, base64url, checked with `timingSafeEqual`. The token
 * signs the claims, not the URL, so a link keeps working behind a proxy that rewrites hosts or
 * paths. Throws a `TypeError` at once for a secret shorter than 32 bytes, a base URL that is not
 * absolute http(s), or a `ttlMs` that is not a positive number.
 *
 * @example
 * const links = approvalLinks({ secret: process.env.TOOLGATE_LINK_SECRET!, baseUrl: 'https://app.example/api/toolgate' });
 * const gate = createServerGate({ tools, ledger, links });
 * const handler = toolgateHandler(gate, { authenticate, links });
 */
export function approvalLinks(options: ApprovalLinksOptions): ApprovalLinks {
  const key = secretOf(options?.secret);
  const baseUrl = baseUrlOf(options.baseUrl);
  const ttlMs = options.ttlMs ?? DAY;
  if (!(typeof ttlMs === 'number' && Number.isFinite(ttlMs) && ttlMs > 0))
    throw new TypeError(
      `approvalLinks: \`ttlMs\` must be a positive number of milliseconds (got ${String(ttlMs)}).`,
    );
  const clock = options.clock ?? systemClock;
  const mac = (payload: string) =>
    createHmac('sha256', key)
      .update(PURPOSE + payload)
      .digest();

  const sign: ApprovalLinks['sign'] = ({ callId, principal, inputHash, expiry }) => {
    const claims = { callId, principal, inputHash, expiry: expiry ?? clock.now() + ttlMs };
    if (!isClaims(claims))
      throw new TypeError(
        'approvalLinks.sign: `callId` and `principal` must be non-empty strings without NUL characters, `inputHash` a SHA-256 hex digest and `expiry` a time in milliseconds.',
      );
    const payload = canonicalJson(claims);
    const token = `${Buffer.from(payload).toString('base64url')}.${mac(payload).toString('base64url')}`;
    if (token.length > MAX_TOKEN)
      throw new TypeError(
        `approvalLinks.sign: a link for call "${callId.slice(0, 40)}…" and "${principal.slice(0, 40)}…" would be ${token.length} characters, more than ${MAX_TOKEN}: the call id or the principal is too long for a URL.`,
      );
    return token;
  };

  const verify: ApprovalLinks['verify'] = (token) => {
    const invalid = {
      ok: false,
      code: 'invalid_link',
      message: 'this link is not one this server made: it was changed, cut short or made up',
    } as const;
    if (typeof token !== 'string' || token.length > MAX_TOKEN) return invalid;
    const parts = TOKEN.exec(token);
    if (parts === null) return invalid;
    const [, encoded = '', signature = ''] = parts;
    const payloadBytes = Buffer.from(encoded, 'base64url');
    const given = Buffer.from(signature, 'base64url');
    // Base64 leaves spare bits in its last character; a token must be the one encoding of its bytes.
    if (payloadBytes.toString('base64url') !== encoded || given.toString('base64url') !== signature)
      return invalid;
    const payload = payloadBytes.toString('utf8');
    const expected = mac(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return invalid;
    let claims: unknown;
    try {
      claims = JSON.parse(payload);
    } catch {
      return invalid;
    }
    if (!isClaims(claims)) return invalid;
    if (clock.now() >= claims.expiry)
      return {
        ok: false,
        code: 'link_expired',
        message: `this link expired at ${new Date(claims.expiry).toISOString()}`,
        claims,
      };
    return { ok: true, claims };
  };

  const urlOf = (token: string) => `${baseUrl}/links/${token}`;

  return {
    baseUrl,
    ttlMs,
    sign,
    verify,
    urlOf,
    linkFor(call, principal) {
      if (call.input === undefined)
        throw new TypeError(
          `approvalLinks.linkFor: call "${call.id}" has no validated input, so there is nothing to approve.`,
        );
      return urlOf(sign({ callId: call.id, principal, inputHash: hashInput(call.input) }));
    },
  };
}

function isClaims(value: unknown): value is LinkClaims {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const claims = value as Record<string, unknown>;
  return (
    Object.keys(claims).length === 4 &&
    typeof claims['callId'] === 'string' &&
    claims['callId'] !== '' &&
    storable(claims['callId']) &&
    typeof claims['principal'] === 'string' &&
    claims['principal'] !== '' &&
    storable(claims['principal']) &&
    typeof claims['inputHash'] === 'string' &&
    /^[0-9a-f]{64}$/.test(claims['inputHash']) &&
    typeof claims['expiry'] === 'number' &&
    Number.isSafeInteger(claims['expiry'])
  );
}

function secretOf(secret: unknown): Buffer {
  let bytes: Buffer | undefined;
  if (typeof secret === 'string') bytes = Buffer.from(secret, 'utf8');
  else if (secret instanceof Uint8Array) bytes = Buffer.from(secret);
  if (bytes === undefined)
    throw new TypeError('approvalLinks: `secret` must be a string or bytes of at least 32 bytes.');
  if (bytes.length < MIN_SECRET_BYTES)
    throw new TypeError(
      `approvalLinks: \`secret\` is ${bytes.length} bytes; it must be at least ${MIN_SECRET_BYTES} (anyone who guesses it can approve any call). Make one with \`openssl rand -base64 32\` and keep it out of the code.`,
    );
  return bytes;
}

function baseUrlOf(baseUrl: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof baseUrl === 'string' ? new URL(baseUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new TypeError(
      `approvalLinks: \`baseUrl\` must be the handler's absolute public URL, such as 'https://app.example/api/toolgate' (got ${JSON.stringify(baseUrl) ?? typeof baseUrl}).`,
    );
  return String(baseUrl).replace(/\/+$/, '');
}
