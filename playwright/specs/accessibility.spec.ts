import type { Page } from '@playwright/test';
import type { AxeResults } from 'axe-core';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, test } from '../playground.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

async function axeViolations(page: Page): Promise<AxeResults['violations']> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE });
  const results = await page.evaluate(() =>
    (window as unknown as { axe: { run: (context: Document) => Promise<AxeResults> } }).axe.run(document),
  );
  return results.violations;
}

const describe = (violations: AxeResults['violations']) =>
  violations
    .map(
      (violation) =>
        `${violation.id} (${violation.impact ?? 'n/a'}): ${violation.help}\n  ${violation.nodes.map((node) => node.target.join(' ')).join('\n  ')}`,
    )
    .join('\n');

for (const colorScheme of ['light', 'dark'] as const) {
  test(`axe finds no violations in the ${colorScheme} theme: empty, after committed and rejected calls, a card payment to refund, awaiting approval, a payment held for a person, the manager’s inbox and the Outbox`, async ({
    page,
    playground,
  }, testInfo) => {
    await page.emulateMedia({ colorScheme });
    expect(describe(await axeViolations(page))).toBe('');

    await playground.run('Three parallel calls, one invalid', /unicorn/);
    await playground.settled();
    expect(describe(await axeViolations(page))).toBe('');

    await playground.run('A payment whose answer was lost', /card on file/);
    await playground.settled();
    await expect(playground.status(0).getByRole('button', { name: 'Refund' })).toBeVisible();
    expect(describe(await axeViolations(page))).toBe('');

    await playground.run('A transfer that needs approval', /sam@example\.com/);
    await expect(playground.status(0)).toHaveAttribute('data-status', 'awaiting_approval');
    expect(describe(await axeViolations(page))).toBe('');
    await playground.screenshot(`axe-${colorScheme}`, testInfo);

    await playground.run('A payment nobody can confirm', /backup card/);
    await expect(playground.status(0).getByRole('button', { name: 'It went through' })).toBeVisible();
    expect(describe(await axeViolations(page))).toBe('');

    // The approver's side: the manager's inbox holding a large transfer, and the Outbox's notices.
    await playground.run('A large transfer your manager approves', /\$80 to the roofer/);
    const approvals = page.getByTestId('approvals');
    await approvals.getByRole('radio', { name: 'the manager', exact: true }).check();
    await expect(approvals.locator('[data-toolgate="call"]')).toHaveCount(1);
    await expect(page.getByTestId('outbox-notice').first()).toBeVisible();
    expect(describe(await axeViolations(page))).toBe('');
    // A notice drawn as its Slack card, then as its mail (the mail's HTML sandboxed in an iframe).
    const notice = page.getByTestId('outbox').locator('[data-kind="asked"][data-to="the manager"]');
    await notice.getByRole('radio', { name: 'Slack card', exact: true }).check();
    await expect(notice.getByTestId('outbox-slack')).toBeVisible();
    expect(describe(await axeViolations(page))).toBe('');
    await notice.getByRole('radio', { name: 'Mail', exact: true }).check();
    await expect(notice.getByTestId('outbox-mail')).toBeVisible();
    expect(describe(await axeViolations(page))).toBe('');
    await notice.getByRole('radio', { name: 'Notice', exact: true }).check();
    await approvals.getByRole('radio', { name: 'you', exact: true }).check();
  });
}
