import { expect, test } from '../playground.ts';

test.use({ viewport: { width: 375, height: 667 } });

test('at 375 px, after picking the transfer scenario, Approve is in view without scrolling by hand, and pressing it works', async ({
  page,
  playground,
}, testInfo) => {
  await playground.open('');
  await playground.scenario('A transfer that needs approval').click();
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  const approve = call.getByRole('button', { name: 'Approve' });
  await expect(approve).toBeEnabled();
  // Nobody scrolled: the page brought the call, with its buttons, into the viewport.
  await expect(approve).toBeInViewport({ ratio: 1 });
  await playground.screenshot('narrow-transfer', testInfo);
  // Nothing overflows the width: the page does not scroll sideways.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  await approve.click();
  await expect(call).toHaveAttribute('data-status', 'committed');
});

test('at 375 px, with four cart lines and more, the cart total stays in sight while the cart scrolls', async ({
  page,
  playground,
}, testInfo) => {
  await playground.open('');
  await playground.say('add two mugs, a cap, a pair of socks, a beanie and a map');
  await playground.settled();
  const cart = page.getByRole('region', { name: 'Cart' });
  await expect(cart.getByRole('row')).toHaveCount(1 + 5 + 1);
  const total = page.getByTestId('cart-total');
  await total.scrollIntoViewIfNeeded();
  // The total's row is visible inside the cart's own scroll box, wherever that box is scrolled.
  for (const position of ['top', 'bottom'] as const) {
    await cart.evaluate((box, to) => box.scrollTo({ top: to === 'top' ? 0 : box.scrollHeight }), position);
    await expect(total).toBeVisible();
    const [boxRect, totalRect] = await Promise.all([cart.boundingBox(), total.boundingBox()]);
    expect(totalRect).not.toBeNull();
    expect(boxRect).not.toBeNull();
    if (totalRect === null || boxRect === null) return;
    expect(totalRect.y).toBeGreaterThanOrEqual(boxRect.y - 1);
    expect(totalRect.y + totalRect.height).toBeLessThanOrEqual(boxRect.y + boxRect.height + 1);
  }
  await playground.screenshot('narrow-cart', testInfo);
});
