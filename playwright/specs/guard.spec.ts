import { expect, test } from '../playground.ts';

test('a model that keeps sending bad arguments is paused by the continuation guard, which says why', async ({
  page,
  playground,
}, testInfo) => {
  await playground.run('A model stuck on bad arguments', 'Pay for my cart: twelve dollars fifty.');
  await playground.settled();

  // Two turns, each with a rejected checkout; then the guard holds the reply back.
  await expect(playground.calls).toHaveCount(2);
  for (const index of [0, 1]) {
    await expect(playground.status(index)).toHaveAttribute('data-status', 'rejected');
    await expect(playground.status(index)).toHaveAttribute('data-reason', 'invalid_arguments');
    await expect(playground.status(index).locator('[data-toolgate="reason"]')).toContainText('/amount_cents');
  }
  const notice = page.getByTestId('notice');
  await expect(notice).toHaveCount(1);
  await expect(notice).toHaveAttribute('data-tone', 'guard');
  await expect(notice.locator('p')).toHaveText(
    'Paused: "checkout" was rejected in 2 turns in a row, so the conversation was paused instead of sending its reply to the model again. Nothing more is sent to the model until you write again.',
  );
  // The model was not asked a third time.
  await expect(page.locator('[data-role="assistant"]')).toHaveCount(2);
  await playground.expectStateUnchanged();
  await playground.screenshot('guard', testInfo);
});
