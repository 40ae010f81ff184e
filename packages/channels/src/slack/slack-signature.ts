import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's own bound: a request signed longer ago than this may be a replay. */
export const MOST_AGE_SECONDS = 5 * 60;

/**
 * Checks a request's `X-Slack-Signature` the way Slack signs it (version `v0`): HMAC-SHA256 with
 * the app's signing secret over `v0:${X-Slack-Request-Timestamp}:${raw body}`, compared in
 * constant time, and refuses a timestamp more than five minutes from `nowMs` (a replay).
 * Answers why it does not hold, in a sentence.
 *
 * @example
 * const checked = checkSlackSignature(secret, request.headers, body, Date.now());
 * if (!checked.ok) return new Response(checked.message, { status: 401 });
 */
export function checkSlackSignature(
  signingSecret: string,
  headers: Headers,
  body: string,
  nowMs: number,
): { ok: true } | { ok: false; message: string } {
  const timestamp = headers.get('x-slack-request-timestamp');
  const signature = headers.get('x-slack-signature');
  if (timestamp === null || signature === null)
    return { ok: false, message: 'the request has no X-Slack-Signature or X-Slack-Request-Timestamp' };
  if (!/^\d{1,12}$/u.test(timestamp))
    return { ok: false, message: 'X-Slack-Request-Timestamp is not a number of seconds' };
  const expected = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected)))
    return { ok: false, message: 'X-Slack-Signature does not match the body and the signing secret' };
  const age = Math.abs(nowMs / 1000 - Number(timestamp));
  if (age > MOST_AGE_SECONDS)
    return {
      ok: false,
      message: `X-Slack-Request-Timestamp is ${Math.round(age)} s from now, more than 5 minutes: refused as a possible replay`,
    };
  return { ok: true };
}
