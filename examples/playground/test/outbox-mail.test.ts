// With an SMTP URL, the playground mails each notice too: a real SMTP server on loopback receives
// the manager's mail for a large transfer, with the input and the confirm page's link.
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterEach, expect, it, vi } from 'vitest';
import type { OutboxItem } from '../src/chat/outbox-item.ts';
import { createPlaygroundServer, type PlaygroundServer } from '../src/server/playground-server.ts';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** An SMTP server on 127.0.0.1 keeping each mail's recipients and raw message. */
async function smtpServer() {
  const received: { to: string[]; raw: string }[] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`, received };
}

it("with an SMTP URL the manager's notice of a large transfer is mailed, with the input and a confirm page's link", async () => {
  const smtp = await smtpServer();
  const server: PlaygroundServer = await createPlaygroundServer({
    ledgerPath: join(mkdtempSync(join(tmpdir(), 'toolgate-mail-')), 'playground.db'),
    publicUrl: 'http://playground.test',
    smtpUrl: smtp.url,
  });
  stops.push(() => server.close());
  const fetchApi = (path: string, init: RequestInit = {}) =>
    server.fetch(new Request(`http://playground.test/api${path}`, init));
  const cookie =
    ((await fetchApi('/visit', { method: 'POST' })).headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const json = { cookie, 'content-type': 'application/json' };
  const { chat } = (await (
    await fetchApi('/chat', { method: 'POST', headers: json, body: JSON.stringify({ pace: 'instant' }) })
  ).json()) as { chat: { id: string } };
  await fetchApi(`/chat/${chat.id}/messages`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ text: 'Send $80 to the roofer, roofer@example.com, for the repair.' }),
  });

  await vi.waitFor(() => expect(smtp.received).toHaveLength(1), { timeout: 10_000, interval: 50 });
  const { notices } = (await (await fetchApi('/outbox', { headers: { cookie } })).json()) as {
    notices: OutboxItem[];
  };
  const asked = notices.find((item) => item.kind === 'asked');
  const [mail] = smtp.received;
  expect(mail?.to).toEqual([`${(asked?.to ?? '').replace(':', '-')}@playground.toolgate.invalid`]);
  expect(mail?.to[0]).toMatch(/-manager@playground\.toolgate\.invalid$/);
  const body = (mail?.raw ?? '').replace(/=\r?\n/g, '').replaceAll('=3D', '=');
  expect(body).toContain('"to": "roofer@example.com"');
  // Each delivery signs a link of its own; the mail's opens the same confirm page.
  expect(body).toMatch(/href="http:\/\/playground\.test\/api\/toolgate\/links\/[\w.-]+"/);
});
