import type { Locator, Page } from '@playwright/test';
import { expect, test } from '../playground.ts';

/** Presses Tab until `target` has focus, as a keyboard user would; fails if it is not reachable. */
async function tabTo(page: Page, target: Locator): Promise<void> {
  for (let presses = 0; presses < 80; presses++) {
    if (await target.evaluate((element) => element === document.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error('the element was not reachable with the Tab key');
}

const TRANSFER = 'A transfer that needs approval';

test('the approval flow with the keyboard alone: pick the scenario, reach Approve, press Enter', async ({
  page,
  playground,
}, testInfo) => {
  await tabTo(page, playground.scenario(TRANSFER));
  await page.keyboard.press('Enter');
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');

  const approve = call.getByRole('button', { name: 'Approve' });
  await tabTo(page, approve);
  await expect(approve).toBeFocused();
  // Approve takes presses once its input is on screen and it has been there a moment, as a person sees it.
  await expect(approve).toBeEnabled();
  await playground.screenshot('keyboard-approve-focused', testInfo);
  await page.keyboard.press('Enter');
  await playground.settled();

  await expect(call).toHaveAttribute('data-status', 'committed');
  await playground.expectChanges(1);
  await expect(page.getByTestId('wallet')).toHaveText('$75.00');
});

test('denying with the keyboard alone: Tab past Approve to Deny, press Space', async ({
  page,
  playground,
}) => {
  await tabTo(page, playground.scenario(TRANSFER));
  await page.keyboard.press('Enter');
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');

  await tabTo(page, call.getByRole('button', { name: 'Approve' }));
  await page.keyboard.press('Tab');
  await expect(call.getByRole('button', { name: 'Deny' })).toBeFocused();
  await expect(call.getByRole('button', { name: 'Deny' })).toBeEnabled();
  await page.keyboard.press('Space');
  await playground.settled();

  await expect(call).toHaveAttribute('data-status', 'cancelled');
  await expect(call).toHaveAttribute('data-reason', 'approval_denied');
  await playground.expectStateUnchanged();
});
