import { expect, test } from '../playground.ts';

const TRANSFER = 'A transfer that needs approval';
const TRANSFER_PROMPT = 'Send $25 to sam@example.com for the camping trip.';
const WIRE = 'A wire that needs two approvers';
const WIRE_PROMPT = 'Wire $40 to landlord@example.com for the rent.';

test('the chat’s transfer budget shows what is used and left; a transfer past it is refused, in dollars, and a new chat starts afresh', async ({
  page,
  playground,
}) => {
  const budget = page.getByTestId('budget');
  await expect(budget).toHaveText('Transfers in this chat: $0.00 of $60.00 used · $60.00 left');
  await playground.run('Transfers past the chat’s budget', /\$45 to sam@example\.com/);
  const [first, second] = [playground.status(0), playground.status(1)];
  await expect(second).toHaveAttribute('data-status', 'rejected');
  await expect(second).toHaveAttribute('data-reason', 'budget_exceeded');
  await expect(second.locator('[data-toolgate="reason"]')).toHaveText(
    'Over this chat’s transfer budget: $45.00 of $60.00 is used and $15.00 is left, and this transfer needs $30.00.',
  );
  // A transfer waiting for a person already counts.
  await expect(first).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(budget).toHaveText('Transfers in this chat: $45.00 of $60.00 used · $15.00 left');
  await first.getByRole('button', { name: 'Approve', exact: true }).click();
  await playground.settled();
  await expect(page.getByTestId('wallet')).toHaveText('$55.00');
  await expect(playground.assistantTexts.last()).toHaveText(
    /^Sent \$45\.00 to sam@example\.com \(tr_\d+\)\. One transfer was refused: Over this chat’s transfer budget: \$45\.00 of \$60\.00 is used and \$15\.00 is left, and this transfer needs \$30\.00\.$/,
  );
  await expect(budget).toHaveAttribute('data-left', '1500');

  // The budget belongs to the chat, as the wallet does.
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(budget).toHaveText('Transfers in this chat: $0.00 of $60.00 used · $60.00 left');
  await playground.run(TRANSFER, TRANSFER_PROMPT);
  await expect(playground.status(0)).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(budget).toHaveText('Transfers in this chat: $25.00 of $60.00 used · $35.00 left');
});

test('a wire runs only once the holder and the manager have both approved it', async ({
  page,
  playground,
}) => {
  await playground.run(WIRE, WIRE_PROMPT);
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  const approvals = call.locator('[data-toolgate="approvals"]');
  await expect(approvals).toHaveAttribute('data-left', '2');

  await call.getByRole('button', { name: 'Approve' }).click();
  await expect(approvals).toHaveAttribute('data-left', '1');
  await expect(approvals).toContainText('1 more of 2 needed');
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(page.getByTestId('wallet')).toHaveText('$100.00');

  // The same person approving again is told so; the wire still waits.
  await call.getByRole('button', { name: 'Approve' }).click();
  await expect(call.locator('[data-toolgate="refusal"]')).toHaveAttribute('data-code', 'already_approved');
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');

  await page.getByTestId('manager-switch').check();
  await call.getByRole('button', { name: 'Approve' }).click();
  await playground.settled();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await expect(approvals).toHaveAttribute('data-left', '0');
  await expect(page.getByTestId('wallet')).toHaveText('$60.00');
  await expect(playground.assistantTexts.last()).toHaveText('Wired $40.00 to landlord@example.com (tr_501).');
});

test('a person changes the amount before approving: a bad amount is refused and the transfer waits; the new one runs, and the model is told', async ({
  page,
  playground,
}) => {
  await playground.run(TRANSFER, TRANSFER_PROMPT);
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  const amount = call.getByRole('textbox', { name: 'Amount ($)' });

  // More than the chat's budget allows: refused as an edit, and the call keeps waiting.
  await amount.fill('70.00');
  await call.getByRole('button', { name: 'Use this amount' }).click();
  await expect(call.locator('[data-toolgate="refusal"]')).toHaveAttribute('data-code', 'invalid_edit');
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');

  await amount.fill('10.00');
  await call.getByRole('button', { name: 'Use this amount' }).click();
  await playground.settled();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await expect(call.locator('[data-toolgate="changes"]')).toContainText('/amount_cents 2500 → 1000');
  await expect(page.getByTestId('wallet')).toHaveText('$90.00');
  await expect(playground.assistantTexts.last()).toHaveText(
    'You changed the amount before approving, so I used yours. Sent $10.00 to sam@example.com (tr_501).',
  );
  await expect(page.getByTestId('budget')).toHaveText(
    'Transfers in this chat: $10.00 of $60.00 used · $50.00 left',
  );
});
