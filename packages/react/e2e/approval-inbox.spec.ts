import { expect, test } from '@playwright/test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqliteLedger, toolgateHandler, type Ledger, type ServerGate } from '@toolgate/server';
import { buildApp, contentType } from './build-app.ts';
import { inboxGate } from '../../server/test/inbox/support.ts';
import { bearer, serve, type Served } from '../../server/test/support/http.ts';

// The approver's inbox in Chromium: a Vite production build of an app that shows <ApprovalInbox />,
// served beside a real server gate (a SQLite file) and its toolgateHandler, on loopback.
const app = fileURLToPath(new URL('./inbox-app/', import.meta.url));

let directory: string;
let ledger: Ledger;
let server: ServerGate;
let propose: ReturnType<typeof inboxGate>['propose'];
let served: Served;

test.beforeAll(async () => {
  const files = await buildApp(app);
  directory = mkdtempSync(join(tmpdir(), 'toolgate-inbox-e2e-'));
  ledger = await sqliteLedger({ path: join(directory, 'ledger.db') });
  ({ gate: server, propose } = inboxGate(ledger));
  const api = toolgateHandler(server, { authenticate: bearer });
  served = await serve(async (request) => {
    const path = new URL(request.url).pathname;
    if (path.startsWith('/api/toolgate/')) return api(request);
    const body = files.get(path === '/' ? '/index.html' : path);
    if (body === undefined) return new Response('not found', { status: 404 });
    return new Response(typeof body === 'string' ? body : new Uint8Array(body), {
      headers: { 'content-type': contentType(path) },
    });
  });
});

test.afterAll(async () => {
  await served.close();
  await server.close();
  await ledger.close();
  rmSync(directory, { recursive: true, force: true });
});

test('an approver sees the calls that ask them arrive live with their input, approves one, and the inbox empties', async ({
  page,
}) => {
  await page.goto(`${served.origin}/?as=manager_1`);
  const inbox = page.getByRole('region', { name: 'Waiting for your approval' });
  await expect(inbox.getByText('Nothing is waiting for your approval.')).toBeVisible();

  await propose('w_live', 'wire', { iban: 'DE02 1234 5678', amount_cents: 50_000 }, 'chat_alice');
  const card = inbox.locator('[data-toolgate="call"][data-status="awaiting_approval"]');
  await expect(card).toHaveCount(1);
  await expect(card).toContainText('DE02 1234 5678');
  await expect(card).toContainText('50000');
  // The default stylesheet: the calls one under another, without list markers.
  await expect(inbox.locator('li')).toHaveCSS('list-style-type', 'none');

  await card.getByRole('button', { name: 'Approve' }).click();
  await expect(inbox.getByText('Nothing is waiting for your approval.')).toBeVisible();
  expect(await server.settled('w_live')).toMatchObject({ status: 'committed', output: { sent: 50_000 } });
});

test('a principal nobody asked sees an empty inbox while others have calls waiting', async ({ page }) => {
  await propose('w_other', 'wire', { iban: 'FR76 0000', amount_cents: 70_000 }, 'chat_bob', 'bob');
  await page.goto(`${served.origin}/?as=mallory`);
  const inbox = page.getByRole('region', { name: 'Waiting for your approval' });
  await expect(inbox.getByText('Nothing is waiting for your approval.')).toBeVisible();
  await expect(inbox.locator('[data-toolgate="call"]')).toHaveCount(0);
  // Muted, in a production build too (whose minifier rewrites light-dark()).
  await expect(inbox.getByText('Nothing is waiting for your approval.')).toHaveCSS(
    'color',
    'rgb(89, 99, 110)',
  );
  expect((await server.awaiting('manager_1')).map((call) => call.id)).toContain('w_other');
});
