// A large transfer through the playground's own server, with its approval times shortened: the
// manager is asked, the visitor's own approval is refused, nobody deciding brings a reminder, then
// finance, then the end, and the Outbox shows each notice as the gate's channel was given it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inputHash } from '@toolgate/core';
import { afterEach, expect, it, vi } from 'vitest';
import type { OutboxItem } from '../src/chat/outbox-item.ts';
import { createPlaygroundServer, type PlaygroundServer } from '../src/server/playground-server.ts';

let server: PlaygroundServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const BASE = 'http://playground.test/api';

it('a large transfer nobody decides reminds the manager, then asks finance too, then expires; the visitor may not approve it, and the Outbox shows each notice to whom it went', async () => {
  server = await createPlaygroundServer({
    ledgerPath: join(mkdtempSync(join(tmpdir(), 'toolgate-large-')), 'playground.db'),
    approvalTimes: { remindAfterMs: 200, escalateAfterMs: 400, approvalTtlMs: 1200 },
    publicUrl: 'http://playground.test',
  });
  const fetchApi = (path: string, init: RequestInit = {}) =>
    (server as PlaygroundServer).fetch(new Request(`${BASE}${path}`, init));
  const visit = await fetchApi('/visit', { method: 'POST' });
  const cookie = (visit.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const json = { cookie, 'content-type': 'application/json' };
  const { chat } = (await (
    await fetchApi('/chat', { method: 'POST', headers: json, body: JSON.stringify({ pace: 'instant' }) })
  ).json()) as { chat: { id: string } };
  await fetchApi(`/chat/${chat.id}/messages`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ text: 'Send $80 to the roofer, roofer@example.com, for the repair.' }),
  });
  const outbox = async () =>
    ((await (await fetchApi('/outbox', { headers: { cookie } })).json()) as { notices: OutboxItem[] })
      .notices;
  const seen = async () => (await outbox()).map((item) => `${item.kind} → ${item.to.replace(/^[^:]*/, '')}`);

  await vi.waitFor(async () => expect(await seen()).toEqual(['asked → :manager']), { timeout: 5000 });
  const [asked] = await outbox();
  expect(asked?.call).toMatchObject({
    name: 'large_transfer',
    status: 'awaiting_approval',
    input: { to: 'roofer@example.com', amount_cents: 8000, memo: 'Roof repair' },
  });
  expect(asked?.link).toMatch(/^http:\/\/playground\.test\/api\/toolgate\/links\/[\w.-]+$/);
  // The outbox carries what Slack and a mail client would show of it, rendered by the server.
  expect(JSON.stringify(asked?.slack.blocks)).toContain('roofer@example.com');
  expect(JSON.stringify(asked?.slack.blocks)).toContain(JSON.stringify(asked?.link));
  expect(asked?.mail.subject).toContain('Approve large_transfer?');
  expect(asked?.mail.text).toContain('"to": "roofer@example.com"');
  expect(asked?.mail.html).toContain(`href="${asked?.link ?? ''}"`);

  // The visitor asked for it: their approval is refused, and says why.
  const id = asked?.call.id ?? '';
  const own = await fetchApi(`/toolgate/calls/${encodeURIComponent(id)}/approve`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ inputHash: await inputHash(asked?.call.input) }),
  });
  expect(own.status).toBe(403);
  expect(await own.json()).toEqual({
    error: {
      code: 'forbidden',
      message: expect.stringContaining('asked for this call and may not approve it'),
    },
  });

  await vi.waitFor(
    async () =>
      // The two expired notices are written in one transaction, in no promised order.
      expect(await seen()).toEqual([
        'asked → :manager',
        'reminder → :manager',
        'escalated → :finance',
        expect.stringMatching(/^expired → :(manager|finance)$/),
        expect.stringMatching(/^expired → :(manager|finance)$/),
      ]),
    { timeout: 10_000, interval: 100 },
  );
  expect(new Set((await seen()).slice(3))).toEqual(new Set(['expired → :manager', 'expired → :finance']));
  const ended = (await outbox()).at(-1);
  expect(ended?.call).toMatchObject({ status: 'cancelled', reason: 'approval_expired' });
  // Nothing left waits for finance, and the wallet is untouched.
  const inbox = await fetchApi('/toolgate/approvals', { headers: { cookie, 'x-playground-as': 'finance' } });
  expect(((await inbox.json()) as { calls: unknown[] }).calls).toEqual([]);
  const shop = (await (await fetchApi(`/chat/${chat.id}/shop`, { headers: { cookie } })).json()) as {
    shop: { balance_cents: number };
  };
  expect(shop.shop.balance_cents).toBe(10_000);
});
