import { createHmac } from 'node:crypto';
import { inputHash, type ToolCallRecord } from '@toolgate/core';
import type { Notice } from '@toolgate/server';
import { describe, expect, it } from 'vitest';
import { checkSlackSignature, slackCard } from '../../src/slack/index.ts';
import { buttonOf } from '../support/fake-slack.ts';
import { NOW, waitingCall } from '../support/records.ts';

const waiting = (input: unknown, extra: Partial<ToolCallRecord> = {}): ToolCallRecord =>
  waitingCall(input, {
    approval: { required: 1, approvedBy: [], left: 1, asked: ['manager_1'], expiresAt: NOW + 3_600_000 },
    ...extra,
  });

const notice = (call: ToolCallRecord, more: Partial<Notice> = {}): Notice => ({
  id: 'ntc_1',
  kind: 'asked',
  to: 'manager_1',
  call,
  from: { principal: 'agent_7', onBehalfOf: 'alice' },
  link: 'https://app.example/api/toolgate/links/abc',
  ...more,
});

/** The text of every preformatted piece of a card, in order. */
const pieces = (blocks: readonly Record<string, unknown>[]) =>
  blocks
    .filter((block) => block['type'] === 'rich_text')
    .map((block) => {
      const [preformatted] = block['elements'] as { elements: { text: string }[] }[];
      return preformatted?.elements.map((element) => element.text).join('') ?? '';
    });

describe('slackCard', () => {
  it('shows who asks and for whom, the input, its digest, the expiry and buttons bound to the call and digest', async () => {
    const input = { iban: 'DE02', memo: '<b>&amp;</b> *bold*' };
    const card = await slackCard(notice(waiting(input)));
    const hash = await inputHash(input);
    const json = JSON.stringify(card.blocks);
    expect(card.text).toBe('Approve wire? agent_7 for alice asks to run wire.');
    expect(pieces(card.blocks)).toEqual([JSON.stringify(input, null, 2)]);
    expect(json).toContain('*agent_7 for alice* asks to run *wire*');
    expect(json).toContain(hash);
    expect(json).toContain('2026-01-01T01:00:00.000Z');
    expect(buttonOf(card.blocks, 'toolgate_approve')?.['value']).toBe(JSON.stringify({ call: 'w1', hash }));
    expect(buttonOf(card.blocks, 'toolgate_deny')?.['value']).toBe(JSON.stringify({ call: 'w1', hash }));
    expect(buttonOf(card.blocks, 'toolgate_open')?.['url']).toBe(
      'https://app.example/api/toolgate/links/abc',
    );
  });

  it('escapes what Slack reads as markup in the names it shows', async () => {
    const card = await slackCard(notice(waiting({}), { from: { principal: '<!channel> & co' } }));
    expect(JSON.stringify(card.blocks)).toContain('*&lt;!channel&gt; &amp; co* asks');
  });

  it('splits a long input into pieces under Slack’s 3,000 characters that give back the whole input', async () => {
    const input = { memo: `${'ab😀'.repeat(4000)}end` };
    const card = await slackCard(notice(waiting(input)));
    const shown = pieces(card.blocks);
    expect(shown.length).toBeGreaterThan(4);
    expect(shown.every((piece) => piece.length <= 3000 && !/^[\uDC00-\uDFFF]/u.test(piece))).toBe(true);
    expect(shown.join('')).toBe(JSON.stringify(input, null, 2));
    expect(buttonOf(card.blocks, 'toolgate_approve')).toBeDefined();
  });

  it('says so when an input is too long for one message, and then offers Deny and the confirm page but no Approve', async () => {
    const input = { memo: 'x'.repeat(40_000) };
    const card = await slackCard(notice(waiting(input)));
    const length = JSON.stringify(input, null, 2).length.toLocaleString('en');
    expect(JSON.stringify(card.blocks)).toContain(
      `The input is ${length} characters; only the first 34,800 are shown here`,
    );
    expect(buttonOf(card.blocks, 'toolgate_approve')).toBeUndefined();
    expect(buttonOf(card.blocks, 'toolgate_deny')).toBeDefined();
    expect(buttonOf(card.blocks, 'toolgate_open')).toBeDefined();
    expect(card.blocks.length).toBeLessThanOrEqual(50);
  });

  it('tells a decided call’s end with who approved, and no buttons', async () => {
    const call = waiting(
      { iban: 'DE02' },
      {
        status: 'committed',
        output: { sent: 1 },
        approval: {
          required: 2,
          approvedBy: [
            { principal: 'manager_1', at: NOW },
            { principal: 'finance_1', at: NOW },
          ],
          left: 0,
        },
      },
    );
    const card = await slackCard(notice(call, { kind: 'decided' }));
    expect(card.text).toBe('wire: Approved. Approved by manager_1 and finance_1; it ran.');
    expect(card.blocks.some((block) => block['type'] === 'actions')).toBe(false);
  });

  it('tells an expired call’s end', async () => {
    const call = waiting(
      {},
      {
        status: 'cancelled',
        reason: { code: 'approval_expired', message: 'the approval expired' },
      },
    );
    const card = await slackCard(notice(call, { kind: 'expired' }));
    expect(card.text).toBe('wire: Expired. Nobody decided in time; it was cancelled and will not run.');
  });
});

describe('checkSlackSignature', () => {
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const body = 'payload=%7B%22type%22%3A%22block_actions%22%7D';
  const at = Math.floor(NOW / 1000);
  const headers = (signature: string, timestamp = String(at)) =>
    new Headers({ 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp });
  const sign = (text: string, timestamp = at) =>
    `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${text}`).digest('hex')}`;

  it('accepts Slack’s v0 signature of the raw body within five minutes', () => {
    expect(checkSlackSignature(secret, headers(sign(body)), body, NOW + 299_000)).toEqual({ ok: true });
  });

  it('refuses a changed body, another secret, a missing header and a timestamp past five minutes', () => {
    expect(checkSlackSignature(secret, headers(sign(body)), `${body}x`, NOW)).toMatchObject({ ok: false });
    expect(checkSlackSignature('another secret', headers(sign(body)), body, NOW)).toMatchObject({
      ok: false,
    });
    expect(checkSlackSignature(secret, new Headers(), body, NOW)).toMatchObject({
      ok: false,
      message: 'the request has no X-Slack-Signature or X-Slack-Request-Timestamp',
    });
    expect(checkSlackSignature(secret, headers(sign(body)), body, NOW + 301_000)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/301 s from now, more than 5 minutes/u),
    });
    expect(checkSlackSignature(secret, headers(sign(body), 'soon'), body, NOW)).toMatchObject({ ok: false });
  });
});
