import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { AxeResults } from 'axe-core';
import { startApp, type AppProcess } from './app-process.ts';

// An app server with approval links (test/support/processes/link-app.ts) as a real process, its
// ledger a SQLite file, and the link's page in Chromium: what a person opening the link from a
// mail sees and presses.
const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let app: AppProcess;

test.describe.configure({ timeout: 60_000 });

test.beforeAll(async () => {
  app = await startApp(packageRoot, 'test/support/processes/link-app.ts');
});

test.afterAll(() => app.stop());

/** Proposes a wire waiting for manager_1, and answers manager_1's link to it. */
async function propose(id: string): Promise<string> {
  const response = await fetch(`${app.origin}/test/calls/${id}`, { method: 'POST' });
  return ((await response.json()) as { link: string }).link;
}

/** The call as the app holds it, and how many times its tool ran. */
async function state(id: string): Promise<{ status: string; runs: number }> {
  return (await (await fetch(`${app.origin}/test/calls/${id}`)).json()) as { status: string; runs: number };
}

async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP allows no script, rightly.
  await page.evaluate(AXE);
  const results = await page.evaluate(() =>
    (window as unknown as { axe: { run: (context: Document) => Promise<AxeResults> } }).axe.run(document),
  );
  return results.violations.flatMap((violation) =>
    violation.nodes.map((node) => `${violation.id} ${node.target.join(' ')}: ${node.failureSummary ?? ''}`),
  );
}

test('opening a link decides nothing; Approve decides once; a reload and a second press are refused with a page that says so', async ({
  page,
  context,
}) => {
  const link = await propose('w1');
  const opened = await page.goto(link);
  expect(opened?.status()).toBe(200);
  expect(opened?.headers()['cache-control']).toBe('no-store');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Approve wire?');
  await expect(page.locator('pre')).toContainText('"memo": "Invoice <42> & \\"rent\\""');
  await expect(page.getByRole('definition').filter({ hasText: 'manager_1' })).toBeVisible();
  expect(await state('w1')).toEqual({ status: 'awaiting_approval', runs: 0 });

  // The same link open in another tab, as a person who opened the mail twice.
  const other = await context.newPage();
  await other.goto(link);

  await page.getByRole('button', { name: 'Approve' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Approved');
  await expect(page.getByRole('status')).toHaveText('You approved this call. It runs now.');
  await expect.poll(() => state('w1')).toEqual({ status: 'committed', runs: 1 });

  // Reloading the answer sends the form again.
  const reloaded = await page.reload();
  expect(reloaded?.status()).toBe(409);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Already decided');
  await expect(page.getByRole('status')).toContainText('This call has already ended. Nothing was changed.');

  await other.getByRole('button', { name: 'Approve' }).click();
  await expect(other.getByRole('heading', { level: 1 })).toHaveText('Already decided');
  expect(await state('w1')).toEqual({ status: 'committed', runs: 1 });

  // Opening the link again shows the end, and nothing to press.
  await page.goto(link);
  await expect(page.getByRole('status')).toHaveText('Nothing to decide: this call is committed.');
  await expect(page.getByRole('button')).toHaveCount(0);
});

test('with JavaScript disabled, the page shows the call and Deny with a reason decides it', async ({
  browser,
}) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  const link = await propose('w2');
  await page.goto(link);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Approve wire?');
  await page.getByLabel('Reason for denying (optional)').fill('not this month');
  await page.getByRole('button', { name: 'Deny' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Denied');
  expect(await state('w2')).toEqual({ status: 'cancelled', runs: 0 });
  await context.close();
});

test('axe finds no violations on the link page, the answer page and a refusal', async ({ page }) => {
  const link = await propose('w3');
  await page.goto(link);
  expect(await axeViolations(page)).toEqual([]);
  await page.getByRole('button', { name: 'Approve' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Approved');
  expect(await axeViolations(page)).toEqual([]);
  await page.goto(`${link.slice(0, -3)}AAA`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('This link is not valid');
  expect(await axeViolations(page)).toEqual([]);
});
