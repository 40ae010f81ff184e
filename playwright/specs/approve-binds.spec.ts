import type { Page } from '@playwright/test';
import { expect, test } from '../playground.ts';

const TRANSFER = 'A transfer that needs approval';
const PROMPT = 'Send $25 to sam@example.com for the camping trip.';
const INPUT = '{"to":"sam@example.com","amount_cents":2500,"memo":"Camping trip"}';

declare global {
  interface Window {
    shownWhenPressable: string[];
    quickPresses: string[];
  }
}

/**
 * Presses each `action` button in the page the instant it appears, and again 100 and 300 ms later,
 * as a quick or double-clicking hand does; the browser runs it, so no test-driver latency delays it.
 */
async function pressOnAppearance(page: Page, action: 'approve' | 'cancel'): Promise<void> {
  await page.evaluate((which) => {
    window.quickPresses = [];
    const seen = new WeakSet<Element>();
    new MutationObserver(() => {
      for (const button of document.querySelectorAll<HTMLButtonElement>(`[data-action="${which}"]`)) {
        if (seen.has(button)) continue;
        seen.add(button);
        const press = (after: number) => {
          window.quickPresses.push(`${after} ms: ${button.getAttribute('aria-disabled') ?? 'enabled'}`);
          button.click();
        };
        press(0);
        setTimeout(() => press(100), 100);
        setTimeout(() => press(300), 300);
      }
    }).observe(document.body, { subtree: true, childList: true });
  }, action);
}

test.beforeEach(async ({ page, playground }) => {
  // The default pace: the model streams its call, the tools take their time.
  await playground.open('');
  // Whenever an Approve can be pressed, what its card shows as the input at that instant.
  await page.evaluate(() => {
    window.shownWhenPressable = [];
    const look = () => {
      for (const approve of document.querySelectorAll(
        '[data-action="approve"]:not([aria-disabled="true"])',
      )) {
        window.shownWhenPressable.push(
          approve.closest('[data-testid="tool-call"]')?.querySelector('[aria-label="Arguments"]')
            ?.textContent ?? '(nothing)',
        );
      }
    };
    new MutationObserver(look).observe(document.body, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
  });
});

test('at the default pace, Approve takes no press until the input it approves is on screen, and then approves that input', async ({
  page,
  playground,
}) => {
  await pressOnAppearance(page, 'approve');
  await playground.run(TRANSFER, PROMPT);
  const call = playground.status(0);
  const approve = call.getByRole('button', { name: 'Approve' });
  await expect(approve).toBeEnabled();
  // Pressed the instant it appeared and twice more within 300 ms: nothing happened.
  expect(await page.evaluate(() => window.quickPresses)).toEqual([
    '0 ms: true',
    '100 ms: true',
    '300 ms: true',
  ]);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(call).not.toHaveAttribute('data-request');
  await expect(playground.calls.nth(0).getByLabel('Arguments')).toHaveText(INPUT);

  await approve.click();
  await playground.settled();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('wallet')).toHaveText('$75.00');
  const shown = await page.evaluate(() => window.shownWhenPressable);
  expect(shown.length).toBeGreaterThan(0);
  expect(new Set(shown)).toEqual(new Set([INPUT]));
});

test('a double Enter on Approve approves once: focus does not land on the Cancel that replaces it', async ({
  page,
  playground,
}) => {
  await playground.run(TRANSFER, PROMPT);
  const call = playground.status(0);
  const approve = call.getByRole('button', { name: 'Approve' });
  await expect(approve).toBeEnabled();
  await approve.focus();
  await page.keyboard.press('Enter');
  await expect(call).toHaveAttribute('data-status', 'executing');
  const cancel = call.getByRole('button', { name: 'Cancel' });
  await expect(cancel).not.toBeFocused();
  await page.keyboard.press('Enter');
  await page.keyboard.press('Enter');
  await playground.settled();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('wallet')).toHaveText('$75.00');
});

test('a click on Cancel the instant it replaces Approve does nothing', async ({ page, playground }) => {
  await playground.run(TRANSFER, PROMPT);
  const call = playground.status(0);
  await pressOnAppearance(page, 'cancel');
  await call.getByRole('button', { name: 'Approve' }).click();
  await playground.settled();
  expect(await page.evaluate(() => window.quickPresses)).toEqual([
    '0 ms: true',
    '100 ms: true',
    '300 ms: true',
  ]);
  await expect(call).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('wallet')).toHaveText('$75.00');
});
