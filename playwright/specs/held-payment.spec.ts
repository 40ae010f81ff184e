import { expect, test } from '../playground.ts';

test('a payment nobody can confirm is held for a person, who checks the provider and settles it on the card', async ({
  playground,
}, testInfo) => {
  await playground.run('A payment nobody can confirm', 'Pay $12.50 with my backup card.');

  const status = playground.status(0);
  await expect(status.locator('[data-toolgate="state"]')).toHaveText('Outcome unknown — check, then settle');
  await expect(status).toHaveAttribute('data-status', 'executing');
  await expect(status.getByRole('button', { name: 'Cancel' })).toHaveCount(0);
  // Nothing runs it again by itself: the model waits for the person's word.
  await expect(playground.chat).toHaveAttribute('data-busy', 'true');
  // The provider recorded one charge; the page's person reads its id there, as in a dashboard.
  const charge = playground.page.getByTestId('provider-charges').getByTestId('provider-charge');
  await expect(charge).toHaveCount(1);
  await expect(charge).toContainText('$12.50 · pm_card_provider_down · paid');
  const id = await charge.locator('code').textContent();
  await playground.screenshot('held-payment', testInfo);

  const output = status.getByLabel('What the tool returned (JSON)');
  const wentThrough = status.getByRole('button', { name: 'It went through' });
  // Not an output the tool returns: the server refuses it, in words, and the call stays held.
  await output.fill(`{"charge": "${id}"}`);
  await wentThrough.click();
  await expect(status.locator('[data-toolgate="refusal"]')).toHaveAttribute('data-code', 'invalid_output');
  await expect(status.locator('[data-toolgate="refusal"]')).toContainText(
    'Not settled: the output you gave is not one this tool returns',
  );
  await expect(status).toHaveAttribute('data-status', 'executing');

  await output.fill(`{"charge": "${id}", "amount_cents": 1250, "currency": "USD"}`);
  await status.getByLabel('How you know').fill(`${id} is at the provider`);
  await wentThrough.click();
  await expect(status).toHaveAttribute('data-status', 'committed');
  await expect(status.locator('[data-toolgate="evidence"]')).toHaveText('(settled by you)');
  await expect(playground.calls.nth(0).locator('.call-output')).toContainText(`"charge":"${id}"`);
  // Settled, never run again: still one charge at the provider.
  await expect(charge).toHaveCount(1);
  await expect(status.getByRole('button', { name: 'Refund' })).toBeVisible();
  await playground.settled();
  await expect(playground.assistantTexts.last()).toHaveText(
    `Paid: charge ${id} for $12.50, as you confirmed at the provider. I will not charge it again.`,
  );
  await playground.screenshot('held-payment-settled', testInfo);
});

test('a chat left while a payment is held says the payment stays held for a person, rather than that it is being cancelled', async ({
  page,
  playground,
}) => {
  await playground.run('A payment nobody can confirm', 'Pay $12.50 with my backup card.');
  await expect(playground.status(0).getByRole('button', { name: 'It went through' })).toBeVisible();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page.getByTestId('notice')).toContainText(
    "Started a new chat. In the last one, pay_by_card's outcome was unknown: it stays held for a person to settle, and is never run again by itself.",
  );
  await expect(playground.calls).toHaveCount(0);
});

test('Stop while a payment is held ends the exchange and says the payment stays held; the card can still be settled', async ({
  page,
  playground,
}) => {
  await playground.run('A payment nobody can confirm', 'Pay $12.50 with my backup card.');
  const status = playground.status(0);
  await expect(status.getByRole('button', { name: 'It went through' })).toBeVisible();
  await page.getByRole('button', { name: 'Stop' }).click();
  await playground.settled();
  await expect(page.getByTestId('notice')).toContainText(
    'Stopped. A call whose outcome nobody knows stays held for a person to settle on its card',
  );
  // No stop ends a held call: it still waits for the person's word, which still settles it.
  await expect(status).toHaveAttribute('data-status', 'executing');
  const id = await page.getByTestId('provider-charge').locator('code').textContent();
  await status
    .getByLabel('What the tool returned (JSON)')
    .fill(`{"charge": "${id}", "amount_cents": 1250, "currency": "USD"}`);
  await status.getByRole('button', { name: 'It went through' }).click();
  await expect(status).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('provider-charge')).toHaveCount(1);
});
