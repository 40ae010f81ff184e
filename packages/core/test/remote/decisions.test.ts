/**
 * Approve, Deny and Cancel as requests, against a fake `fetch`: what is sent, when nothing is, and
 * how each answer (or none) shows in `requestOf(id)`.
 */
import { describe, expect, it, vi } from 'vitest';
import { inputHash } from '../../src/record/input-hash.ts';
import type { ToolCallRecord, ToolCallStatus } from '../../src/record/record.ts';
import { createDecisions } from '../../src/remote/decisions.ts';
import { wireRecord } from '@toolgate/test-utils';

const input = { amount_cents: 1250, currency: 'USD' };

interface Sent {
  readonly url: string;
  readonly body: unknown;
  readonly headers: Headers;
  readonly answer: (response: Response | Error) => void;
}

function decisionsOf(status: ToolCallStatus = 'awaiting_approval', options: { live?: boolean } = {}) {
  const records = new Map<string, ToolCallRecord>([['c1', wireRecord('c1', 'charge', input, status)]]);
  const sent: Sent[] = [];
  const fetch = vi.fn(
    (url: string, init?: RequestInit) =>
      new Promise<Response>((resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
        sent.push({
          url,
          body: JSON.parse(init?.body as string),
          headers: new Headers(init?.headers),
          answer: (response) => (response instanceof Error ? reject(response) : resolve(response)),
        });
      }),
  );
  let live = options.live ?? true;
  const retryNow = vi.fn();
  const published: string[] = [];
  const decisions = createDecisions({
    base: 'https://app.test/api/toolgate',
    fetch: fetch as unknown as typeof globalThis.fetch,
    headers: () => ({ Authorization: 'Bearer t' }),
    get: (id) => records.get(id),
    live: () => live,
    retryNow,
    publish: (id) => published.push(id),
  });
  /** Resolves once the request about c1 is no longer `sending`. */
  const answered = () => vi.waitFor(() => expect(decisions.requestOf('c1')?.state).not.toBe('sending'));
  const move = (to: ToolCallStatus) => {
    records.set('c1', wireRecord('c1', 'charge', input, to));
    decisions.moved('c1');
  };
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  return {
    decisions,
    sent,
    fetch,
    retryNow,
    published,
    answered,
    move,
    json,
    setLive: (next: boolean) => (live = next),
  };
}

describe('remote decisions', () => {
  it('approve posts the hash of the input the record shows, with the headers; the request is sending until the call moves', async () => {
    const { decisions, sent, published, move, json } = decisionsOf();
    expect(decisions.approve('c1')).toBe(true);
    expect(decisions.requestOf('c1')).toEqual({ action: 'approve', state: 'sending' });
    expect(published).toEqual(['c1']);
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]?.url).toBe('https://app.test/api/toolgate/calls/c1/approve');
    expect(sent[0]?.body).toEqual({ inputHash: await inputHash(input) });
    expect(sent[0]?.headers.get('authorization')).toBe('Bearer t');
    expect(sent[0]?.headers.get('content-type')).toBe('application/json');
    sent[0]?.answer(json(200, { ok: true }));
    // Accepted, but the move has not arrived: still on its way as far as the person can tell.
    await Promise.resolve();
    expect(decisions.requestOf('c1')?.state).toBe('sending');
    move('executing');
    expect(decisions.requestOf('c1')).toBeUndefined();
  });

  it('an approval others must follow ends with its answer; an edit is sent beside the hash of what was shown', async () => {
    const { decisions, sent, json } = decisionsOf();
    decisions.approve('c1', { input: { amount_cents: 1000, currency: 'USD' } });
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]?.body).toEqual({
      inputHash: await inputHash(input),
      input: { amount_cents: 1000, currency: 'USD' },
    });
    sent[0]?.answer(json(200, { ok: true, left: 1 }));
    await vi.waitFor(() => expect(decisions.requestOf('c1')).toBeUndefined());
  });

  it("a refusal shows the server's code and words, and the person can decide again", async () => {
    const { decisions, sent, answered, json } = decisionsOf();
    decisions.deny('c1', 'not this one');
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]?.body).toEqual({ reason: 'not this one' });
    sent[0]?.answer(
      json(409, { error: { code: 'expired', message: 'the approval expired; the call was cancelled' } }),
    );
    await answered();
    expect(decisions.requestOf('c1')).toEqual({
      action: 'deny',
      state: 'refused',
      error: { code: 'expired', message: 'the approval expired; the call was cancelled' },
    });
    expect(decisions.approve('c1')).toBe(true);
  });

  it('no answer at all is refused network_error, and the feed is asked to reopen at once', async () => {
    const { decisions, sent, answered, retryNow } = decisionsOf('executing');
    decisions.cancel('c1');
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    sent[0]?.answer(new TypeError('fetch failed'));
    await answered();
    expect(decisions.requestOf('c1')).toEqual({
      action: 'cancel',
      state: 'refused',
      error: { code: 'network_error', message: 'no answer from the server: fetch failed' },
    });
    expect(retryNow).toHaveBeenCalledTimes(1);
  });

  it('while the feed is not live nothing is sent: the decision is refused offline at once, and the feed is asked to reopen', () => {
    const { decisions, fetch, retryNow, published } = decisionsOf('awaiting_approval', { live: false });
    expect(decisions.approve('c1')).toBe(true);
    expect(decisions.requestOf('c1')).toEqual({
      action: 'approve',
      state: 'refused',
      error: { code: 'offline', message: expect.stringContaining('was not sent') },
    });
    expect(published).toEqual(['c1']);
    expect(fetch).not.toHaveBeenCalled();
    expect(retryNow).toHaveBeenCalledTimes(1);
  });

  it('answers false, sending nothing, for a call in a status that does not allow it, an unknown call, or one with a request on its way', () => {
    const { decisions, fetch } = decisionsOf('executing');
    expect(decisions.approve('c1')).toBe(false);
    expect(decisions.deny('c1')).toBe(false);
    expect(decisions.cancel('nope')).toBe(false);
    expect(decisions.cancel('c1')).toBe(true);
    expect(decisions.cancel('c1')).toBe(false);
    const done = decisionsOf('committed');
    expect(done.decisions.cancel('c1')).toBe(false);
    expect(fetch).toHaveBeenCalledTimes(0);
  });

  it('close() aborts what is on its way without a refusal or a reconnect, and sends nothing more', async () => {
    const { decisions, sent, retryNow, fetch } = decisionsOf();
    decisions.approve('c1');
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    decisions.close();
    await expect(fetch.mock.results[0]?.value).rejects.toThrow('aborted');
    // Every continuation of the aborted request has run before the next macrotask.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(decisions.requestOf('c1')).toEqual({ action: 'approve', state: 'sending' });
    expect(retryNow).not.toHaveBeenCalled();
    expect(decisions.deny('c1')).toBe(false);
    expect(fetch).toHaveBeenCalledTimes(1);
  });
});
