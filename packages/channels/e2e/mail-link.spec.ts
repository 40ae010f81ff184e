import { expect, test } from '@playwright/test';
import { fileURLToPath } from 'node:url';
import { startApp, type AppProcess } from '../../server/e2e/app-process.ts';

// An app server whose approver is reached by mail (test/support/processes/mail-app.ts) as a real
// process, with a real SMTP server taking the gate's mail, its ledger a SQLite file; the link in
// the received mail followed in Chromium, as the approver would.
const packageRoot = fileURLToPath(new URL('..', import.meta.url));

let app: AppProcess;

test.describe.configure({ timeout: 60_000 });

test.beforeAll(async () => {
  app = await startApp(packageRoot, 'test/support/processes/mail-app.ts');
});

test.afterAll(() => app.stop());

interface Mail {
  readonly to: string[];
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** Proposes a wire waiting for manager_1, and answers the mail manager_1 received about it. */
async function propose(id: string): Promise<Mail> {
  return (await (await fetch(`${app.origin}/test/calls/${id}`, { method: 'POST' })).json()) as Mail;
}

/** The call as the app holds it, and how many times its tool ran. */
async function state(id: string): Promise<{ status: string; runs: number }> {
  return (await (await fetch(`${app.origin}/test/calls/${id}`)).json()) as { status: string; runs: number };
}

test('the link in the mail opens the confirm page and decides nothing; Approve on it decides once', async ({
  page,
}) => {
  const mail = await propose('w1');
  expect(mail.to).toEqual(['manager_1@corp.example']);
  expect(mail.subject).toBe('Approve wire? alice asks (call w1)');
  expect(mail.text).toContain('"memo": "Invoice <42> & \\"rent\\""');

  // The approver clicks the link in the HTML mail; the text mail carries the same one.
  await page.setContent(mail.html);
  const link = await page.getByRole('link', { name: 'Open the confirm page' }).getAttribute('href');
  expect(link).toMatch(new RegExp(`^${app.origin}/api/toolgate/links/`, 'u'));
  expect(mail.text).toContain(link ?? '');

  // A mail scanner fetches it first, then the approver opens it, twice: nothing is decided.
  expect((await fetch(link ?? '', { method: 'HEAD' })).status).toBe(200);
  expect((await fetch(link ?? '')).status).toBe(200);
  await page.getByRole('link', { name: 'Open the confirm page' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Approve wire?');
  await expect(page.locator('pre')).toContainText('"memo": "Invoice <42> & \\"rent\\""');
  await page.reload();
  expect(await state('w1')).toEqual({ status: 'awaiting_approval', runs: 0 });

  await page.getByRole('button', { name: 'Approve' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Approved');
  await expect.poll(() => state('w1')).toEqual({ status: 'committed', runs: 1 });

  // Sending the form again (a reload of the answer) decides nothing more.
  const again = await page.reload();
  expect(again?.status()).toBe(409);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Already decided');
  expect(await state('w1')).toEqual({ status: 'committed', runs: 1 });
});
