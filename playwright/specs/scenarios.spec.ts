import { expect, test } from '../playground.ts';

test('a valid purchase commits once: the wallet pays $12.50 and the cart empties', async ({
  playground,
}, testInfo) => {
  await playground.run('A valid purchase', 'Please check out my cart.');
  await playground.settled();

  await expect(playground.calls).toHaveCount(1);
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await playground.expectChanges(1);
  await expect(playground.verdict).toHaveAttribute('data-verdict', 'changed');
  await expect(playground.page.getByTestId('wallet')).toHaveText('$87.50');
  await expect(playground.appState).toContainText('The cart is empty.');
  await expect(playground.appState).toContainText('ord_1001 · $12.50');
  await expect(playground.assistantTexts.last()).toHaveText(
    'Done: order ord_1001 is paid, $12.50 from your wallet.',
  );
  await playground.screenshot('purchase', testInfo);
});

test('cents sent as the string "12.50" are rejected, and the model corrects itself on the next turn', async ({
  playground,
}, testInfo) => {
  await playground.run('Cents sent as "12.50"', 'Check out my cart, it is $12.50.');
  await playground.settled();

  await expect(playground.calls).toHaveCount(2);
  const rejected = playground.status(0);
  await expect(rejected).toHaveAttribute('data-status', 'rejected');
  await expect(rejected).toHaveAttribute('data-reason', 'invalid_arguments');
  await expect(rejected.locator('[data-toolgate="reason"]')).toContainText('/amount_cents');
  await expect(rejected.locator('[data-toolgate="reason"]')).toContainText('integer');
  await expect(playground.calls.nth(0).getByLabel('Arguments')).toHaveText(
    '{"amount_cents": "12.50", "currency": "USD"}',
  );

  await expect(playground.assistantTexts.nth(1)).toContainText('not the string "12.50". Retrying with 1250.');
  await expect(playground.status(1)).toHaveAttribute('data-status', 'committed');
  // The rejected call changed nothing; the corrected one changed the state exactly once.
  await playground.expectChanges(1);
  await expect(playground.page.getByTestId('wallet')).toHaveText('$87.50');
  await playground.screenshot('cents-string', testInfo);
});

test('an unknown tool is rejected, the state is byte-for-byte unchanged, and the model is told which tools exist', async ({
  playground,
}, testInfo) => {
  await playground.run('An unknown tool', 'Refund my last order.');
  await playground.settled();

  await expect(playground.calls).toHaveCount(1);
  await expect(playground.status(0)).toHaveAttribute('data-status', 'rejected');
  await expect(playground.status(0)).toHaveAttribute('data-reason', 'unknown_tool');
  await expect(playground.status(0).locator('[data-toolgate="reason"]')).toContainText(
    'no tool named "refund_order" is registered',
  );
  await playground.expectStateUnchanged();
  await expect(playground.verdict).toHaveAttribute('data-verdict', 'unchanged');
  await expect(playground.verdict).toContainText('Unchanged: refund_order was rejected (unknown_tool).');
  await expect(playground.assistantTexts.last()).toContainText(
    'I can\'t issue refunds here: this shop has no refund tool (it has "add_to_cart"',
  );
  await playground.screenshot('unknown-tool', testInfo);
});

test('a tool that cancels by app policy ends cancelled with its reason, and nothing changes', async ({
  playground,
}, testInfo) => {
  await playground.run('Cancelled by app policy', 'Apply the staff coupon STAFF100.');
  await playground.settled();

  await expect(playground.status(0)).toHaveAttribute('data-status', 'cancelled');
  await expect(playground.status(0)).toHaveAttribute('data-reason', 'tool_cancelled');
  await expect(playground.status(0).locator('[data-toolgate="reason"]')).toHaveText(
    'STAFF100 is a staff coupon; store policy allows staff coupons only at the staff till',
  );
  await playground.expectStateUnchanged();
  await expect(playground.verdict).toContainText('Unchanged: apply_coupon was cancelled (tool_cancelled).');
  await expect(playground.assistantTexts.last()).toContainText('The shop declined the coupon');
  await playground.screenshot('policy-cancel', testInfo);
});

test('a slow tool cancelled mid-flight ends user_cancelled, and nothing changes', async ({
  playground,
}, testInfo) => {
  await playground.run('A slow tool you cancel', 'When is the earliest delivery to 94110?');
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'executing');
  await expect(playground.chat).toHaveAttribute('data-busy', 'true');
  await call.getByRole('button', { name: 'Cancel' }).click();
  await playground.settled();

  await expect(call).toHaveAttribute('data-status', 'cancelled');
  await expect(call).toHaveAttribute('data-reason', 'user_cancelled');
  await expect(call.locator('[data-toolgate="reason"]')).toHaveText('the user cancelled this call');
  await playground.expectStateUnchanged();
  await expect(playground.assistantTexts.last()).toHaveText(
    'Stopped the delivery search as you asked. Nothing was booked.',
  );
  await playground.screenshot('slow-cancel', testInfo);
});

test('a transfer waits for approval; approved, it commits once', async ({ playground }, testInfo) => {
  await playground.run('A transfer that needs approval', 'Send $25 to sam@example.com for the camping trip.');
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(call).toContainText('Needs approval');
  // Nothing moves while a person has not decided.
  expect(await playground.stateMarkup()).toBe(playground.initialState);
  await playground.screenshot('transfer-awaiting-approval', testInfo);

  await call.getByRole('button', { name: 'Approve' }).click();
  await playground.settled();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await playground.expectChanges(1);
  await expect(playground.page.getByTestId('wallet')).toHaveText('$75.00');
  await expect(playground.appState).toContainText('$25.00 to sam@example.com');
  await expect(playground.assistantTexts.last()).toHaveText('Sent $25.00 to sam@example.com (tr_501).');
  await playground.screenshot('transfer-approved', testInfo);
});

test('a transfer that is denied ends approval_denied, and nothing changes', async ({
  playground,
}, testInfo) => {
  await playground.run('A transfer that needs approval', 'Send $25 to sam@example.com for the camping trip.');
  const call = playground.status(0);
  await call.getByRole('button', { name: 'Deny' }).click();
  await playground.settled();

  await expect(call).toHaveAttribute('data-status', 'cancelled');
  await expect(call).toHaveAttribute('data-reason', 'approval_denied');
  await expect(call).toContainText('Denied');
  await expect(call.locator('[data-toolgate="reason"]')).toHaveText('a person denied this call');
  await playground.expectStateUnchanged();
  await expect(playground.assistantTexts.last()).toHaveText('Understood, I did not send the money.');
  await playground.screenshot('transfer-denied', testInfo);
});

test('three parallel calls with one invalid: two commit, one is rejected on its own', async ({
  playground,
}, testInfo) => {
  await playground.run(
    'Three parallel calls, one invalid',
    'Add two pairs of socks, a cap and a unicorn plush to my cart.',
  );
  await playground.settled();

  await expect(playground.calls).toHaveCount(3);
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await expect(playground.status(1)).toHaveAttribute('data-status', 'committed');
  await expect(playground.status(2)).toHaveAttribute('data-status', 'rejected');
  await expect(playground.status(2)).toHaveAttribute('data-reason', 'invalid_arguments');
  await expect(playground.status(2).locator('[data-toolgate="reason"]')).toContainText('/sku');
  // One state change per committed call, none for the rejected one.
  await playground.expectChanges(2);
  await expect(playground.appState.getByRole('row', { name: /Wool hiking socks 2 \$18\.00/ })).toBeVisible();
  await expect(playground.appState.getByRole('row', { name: /Field cap 1 \$18\.00/ })).toBeVisible();
  await expect(playground.appState).not.toContainText('unicorn');
  await expect(playground.assistantTexts.last()).toHaveText(
    'Added Wool hiking socks and Field cap. One item was refused: there is no unicorn plush in the catalog.',
  );
  await playground.screenshot('parallel', testInfo);
});

test('a tool that throws ends failed with tool_error, and nothing changes', async ({
  playground,
}, testInfo) => {
  await playground.run('A tool that throws', 'Where is my order ord_1000?');
  await playground.settled();

  await expect(playground.status(0)).toHaveAttribute('data-status', 'failed');
  await expect(playground.status(0)).toHaveAttribute('data-reason', 'tool_error');
  await expect(playground.status(0).locator('[data-toolgate="reason"]')).toContainText(
    '503 Service Unavailable',
  );
  await playground.expectStateUnchanged();
  await expect(playground.verdict).toContainText('Unchanged: track_order failed (tool_error).');
  await playground.screenshot('tool-throws', testInfo);
});
