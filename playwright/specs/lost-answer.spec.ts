import { expect, test } from '../playground.ts';

test('a payment whose answer was lost is settled on the provider’s evidence, charged once, and Refund undoes it', async ({
  playground,
}, testInfo) => {
  await playground.run('A payment whose answer was lost', 'Pay $12.50 with my card on file.');
  await playground.settled();

  await expect(playground.calls).toHaveCount(1);
  const status = playground.status(0);
  await expect(status).toHaveAttribute('data-status', 'committed');
  await expect(status.locator('[data-toolgate="evidence"]')).toHaveText(
    '(settled on evidence from the system it called)',
  );
  await expect(playground.calls.nth(0).locator('.call-output')).toContainText('"charge":"ch_');
  // The tool threw, and the provider was asked, never charged again: one charge.
  const provider = playground.page.getByTestId('provider-charges');
  await expect(provider.getByTestId('provider-charge')).toHaveCount(1);
  await expect(provider.getByTestId('provider-charge-count')).toHaveText('1 charge');
  await expect(provider.getByTestId('provider-charge')).toContainText('$12.50 · pm_card_answer_lost · paid');
  await expect(playground.assistantTexts.last()).toContainText(
    'it was charged once. I will not charge it again.',
  );
  // The card is paid at the provider, not from the wallet: the shop's state never changed.
  await playground.expectStateUnchanged();
  await expect(playground.verdict).toHaveAttribute('data-verdict', 'elsewhere');
  await expect(playground.verdict).toContainText(
    'pay_by_card acted in another system (the payment provider)',
  );
  await playground.screenshot('lost-answer', testInfo);

  await status.getByRole('button', { name: 'Refund' }).click();
  const undone = status.locator('[data-toolgate="compensation"]');
  await expect(undone).toHaveAttribute('data-status', 'committed');
  await expect(undone).toContainText('Refunded');
  await expect(undone.locator('[data-toolgate="compensation-id"]')).toHaveText(/:compensate$/);
  await expect(status.getByRole('button', { name: 'Refund' })).toHaveCount(0);
  await expect(playground.calls.nth(0).getByTestId('compensation-output')).toContainText('"refund":"re_');
  await expect(provider.getByTestId('provider-charge')).toHaveCount(1);
  await expect(provider.getByTestId('provider-charge')).toContainText('refunded (re_');
  await playground.screenshot('lost-answer-refunded', testInfo);
});
