import { expect, test } from '../playground.ts';

test('the verdict still names the last settled call after a reload, with the state changes so far', async ({
  page,
  playground,
}, testInfo) => {
  // Two exchanges at the realistic pace, and a reload between them.
  test.setTimeout(60_000);
  await playground.open('');
  await playground.run('A transfer that needs approval', 'Send $25 to sam@example.com for the camping trip.');
  const call = playground.status(0);
  await call.getByRole('button', { name: 'Approve' }).click();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await playground.settled();
  await expect(playground.verdict).toHaveAttribute('data-verdict', 'changed');
  await expect(playground.verdict).toContainText('Changed by transfer_funds, committed.');
  await expect(playground.verdict).toContainText('1 state change');

  await page.reload();
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await expect(playground.verdict).toHaveAttribute('data-verdict', 'changed');
  await expect(playground.verdict).toContainText('Changed by transfer_funds, committed.');
  await expect(playground.verdict).toHaveAttribute('data-changes', '1');
  await expect(playground.verdict).toContainText('1 state change');
  await playground.screenshot('verdict-after-reload', testInfo);

  // A refusal after the reload becomes the verdict, and the count goes on from where it was.
  await playground.say('send -20 dollars to alice@example.com');
  await playground.settled();
  await expect(playground.verdict).toHaveAttribute('data-verdict', 'unchanged');
  await expect(playground.verdict).toContainText(
    'Unchanged: transfer_funds was rejected (invalid_arguments).',
  );
  await expect(playground.verdict).toHaveAttribute('data-changes', '1');
});

test("the verdict follows the browser's own gate too: a page tool's commit changes the page's view, not the shop", async ({
  playground,
}) => {
  await playground.open('');
  await playground.run('A tool that runs in your browser', 'Show me the steel bottle.');
  await playground.settled();
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await expect(playground.verdict).toHaveAttribute('data-verdict', 'view');
  await expect(playground.verdict).toContainText(
    'Committed: show_product changed only this page’s view, not the shop.',
  );
  await playground.expectStateUnchanged();
});

test('the verdict and the notices are live regions, so a screen reader announces them', async ({
  page,
  playground,
}) => {
  await playground.open('');
  await expect(playground.verdict).toHaveAttribute('role', 'status');
  await expect(playground.verdict).toHaveAttribute('aria-live', 'polite');
  await playground.run('A model stuck on bad arguments', 'Pay for my cart: twelve dollars fifty.');
  await playground.settled();
  const notice = page.getByTestId('notice');
  await expect(notice).toHaveCount(1);
  await expect(notice).toHaveAttribute('role', 'status');
  await expect(notice).toHaveAttribute('aria-live', 'polite');
  await expect(page.getByRole('status').filter({ hasText: 'Paused:' })).toHaveCount(1);
});
