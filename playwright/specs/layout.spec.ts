import type { Page } from '@playwright/test';
import { expect, test } from '../playground.ts';

/**
 * Every box that overlaps a sibling box, or sticks out of its parent, among the visible children of
 * each element `selector` matches: the things a visitor sees printed on top of each other.
 */
function collisions(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((roots) => {
    const found: string[] = [];
    const name = (element: Element) =>
      `${element.tagName.toLowerCase()}${[...element.attributes]
        .filter((attribute) =>
          ['class', 'data-toolgate', 'data-testid', 'data-action'].includes(attribute.name),
        )
        .map((attribute) => `[${attribute.name}=${attribute.value}]`)
        .join('')} "${(element.textContent ?? '').trim().slice(0, 40)}"`;
    for (const root of document.querySelectorAll(roots)) {
      const outer = root.getBoundingClientRect();
      const children = [...root.children].filter((child) => {
        const box = child.getBoundingClientRect();
        return getComputedStyle(child).visibility !== 'hidden' && box.width > 0 && box.height > 0;
      });
      const boxes = children.map((child) => child.getBoundingClientRect());
      boxes.forEach((box, i) => {
        const child = children[i] as Element;
        if (box.left < outer.left - 1 || box.right > outer.right + 1 || box.bottom > outer.bottom + 1)
          found.push(`${name(child)} sticks out of ${name(root)}`);
        boxes.slice(i + 1).forEach((other, j) => {
          const width = Math.min(box.right, other.right) - Math.max(box.left, other.left);
          const height = Math.min(box.bottom, other.bottom) - Math.max(box.top, other.top);
          if (width > 1 && height > 1)
            found.push(`${name(child)} overlaps ${name(children[i + 1 + j] as Element)}`);
        });
      });
      // Text cut short inside a box that does not scroll is a sentence the visitor cannot read.
      for (const text of root.querySelectorAll('p, span')) {
        const style = getComputedStyle(text);
        if (style.overflowY === 'hidden' && text.scrollHeight > text.clientHeight + 1)
          found.push(`${name(text)} is cut at ${text.clientHeight}px of ${text.scrollHeight}px`);
      }
    }
    return found;
  }, selector);
}

/** The parts of the page this spec holds to their boxes. */
const PARTS = [
  '[data-testid="tool-call"]',
  '.call-head',
  '.call-status',
  '.call-status [data-toolgate="label"]',
  '.call-status [data-toolgate="actions"]',
  '.call-status [data-toolgate="approvals"]',
  '.call-status [data-toolgate="undo"]',
  '.call-status [data-toolgate="settle"]',
  '.call-edit',
  '[data-testid="policy"]',
  '[data-testid="approvals"]',
  '.approvals-view [data-toolgate="call"]',
  '[data-testid="outbox"]',
  '.outbox-notice',
  '.outbox-views',
  '.slack-card',
  '.mail-view',
  '[data-testid="state-verdict"]',
].join(', ');

for (const colorScheme of ['light', 'dark'] as const) {
  for (const width of [1280, 375]) {
    test.describe(`${width} px, ${colorScheme}`, () => {
      test.use({ viewport: { width, height: 900 }, colorScheme });

      test('nothing is drawn over anything else: a wire approved by two, a budget refusal, a refunded card payment, a payment held for a person, a large transfer in the manager’s inbox and the Outbox, a call waiting while the server is away', async ({
        page,
        playground,
      }, testInfo) => {
        test.setTimeout(60_000);
        const seen: Record<string, string[]> = {};
        const look = async (moment: string) => {
          seen[moment] = await collisions(page, PARTS);
          await playground.screenshot(`layout-${moment}-${width}-${colorScheme}`, testInfo);
        };

        await playground.run(
          'A wire that needs two approvers',
          'Wire $40 to landlord@example.com for the rent.',
        );
        const wire = playground.status(0);
        await wire.getByRole('button', { name: 'Approve', exact: true }).click();
        await expect(wire.locator('[data-toolgate="approvals"]')).toHaveText(
          'Approved by you · 1 more of 2 needed',
        );
        await look('wire-waiting');
        await page.getByTestId('manager-switch').check();
        await wire.getByRole('button', { name: 'Approve', exact: true }).click();
        await playground.settled();
        await expect(wire).toHaveAttribute('data-status', 'committed');
        await expect(wire.locator('[data-toolgate="approvals"]')).toHaveText(
          'Approved by you, you as the manager',
        );
        await look('wire-done');

        await playground.run('A payment whose answer was lost', /card on file/);
        await playground.settled();
        await playground.status(0).getByRole('button', { name: 'Refund' }).click();
        await expect(playground.status(0).locator('[data-toolgate="compensation"]')).toHaveAttribute(
          'data-status',
          'committed',
        );
        await look('refunded');

        await playground.run('A payment nobody can confirm', /backup card/);
        await expect(playground.status(0).getByRole('button', { name: 'It went through' })).toBeVisible();
        await look('held');

        // A large transfer waits for the manager: the chat's card, the manager's inbox, the Outbox.
        await playground.run('A large transfer your manager approves', /\$80 to the roofer/);
        await expect(playground.status(0)).toHaveAttribute('data-status', 'awaiting_approval');
        await page.getByTestId('approvals').getByRole('radio', { name: 'the manager', exact: true }).check();
        await expect(page.getByTestId('approvals').locator('[data-toolgate="call"]')).toHaveCount(1);
        await expect(page.getByTestId('outbox-notice').first()).toBeVisible();
        await page.getByTestId('approvals').scrollIntoViewIfNeeded();
        await look('manager-inbox');
        // A notice as its Slack card, and as its mail.
        const notice = page.getByTestId('outbox').locator('[data-kind="asked"][data-to="the manager"]');
        await notice.getByRole('radio', { name: 'Slack card', exact: true }).check();
        await notice.getByTestId('outbox-slack').scrollIntoViewIfNeeded();
        await look('outbox-slack');
        await notice.getByRole('radio', { name: 'Mail', exact: true }).check();
        await notice.getByTestId('outbox-mail').scrollIntoViewIfNeeded();
        await look('outbox-mail');
        await notice.getByRole('radio', { name: 'Notice', exact: true }).check();

        await playground.run('Transfers past the chat’s budget', /\$45 to sam@example\.com/);
        await expect(playground.status(1)).toHaveAttribute('data-reason', 'budget_exceeded');
        await expect(playground.status(0)).toHaveAttribute('data-status', 'awaiting_approval');
        await look('budget');

        // The server goes out of reach while a transfer waits: the page says so beside the call.
        await page.route('**/api/toolgate/**', (route) => route.abort());
        await page.evaluate(() => fetch('/api/test/drop-feeds', { method: 'POST' }));
        await expect(playground.status(0).locator('[data-toolgate="connection"]')).toBeVisible({
          timeout: 15_000,
        });
        await look('offline');

        expect(seen).toEqual({
          'wire-waiting': [],
          'wire-done': [],
          budget: [],
          refunded: [],
          held: [],
          'manager-inbox': [],
          'outbox-slack': [],
          'outbox-mail': [],
          offline: [],
        });
      });
    });
  }
}
