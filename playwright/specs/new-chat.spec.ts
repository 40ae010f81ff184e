import { expect, test } from '../playground.ts';

/**
 * "New chat" leaves the conversation for good: the page offers no way back to it. A transfer that
 * still awaited approval there is cancelled through the server gate (`user_cancelled`), so that
 * nobody can approve what nobody sees any more, and the new chat says so.
 */
test('"New chat" with a transfer awaiting approval cancels it through the server gate and says so in the new chat', async ({
  page,
  playground,
}, testInfo) => {
  await playground.open('');
  await playground.run('A transfer that needs approval', 'Send $25 to sam@example.com for the camping trip.');
  await expect(playground.status(0)).toHaveAttribute('data-status', 'awaiting_approval');
  const oldChat = (await playground.chat.getAttribute('data-chat-id')) ?? '';
  const callId = (await playground.calls.nth(0).getAttribute('data-call-id')) ?? '';

  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(playground.chat).not.toHaveAttribute('data-chat-id', oldChat);
  const notice = page.getByTestId('notice');
  await expect(notice).toHaveCount(1);
  await expect(notice).toHaveText(/transfer_funds.*awaited your approval.*cancelled/);
  await expect(notice).toHaveAttribute('role', 'status');
  await playground.screenshot('new-chat-cancelled', testInfo);

  // In the ledger: cancelled, by the visitor, and never run.
  const calls = await page.evaluate(
    async (session) =>
      (await (await fetch(`/api/toolgate/sessions/${session}/calls`)).json()) as {
        calls: { id: string; status: string; reason?: { code: string; message: string } }[];
      },
    oldChat,
  );
  expect(calls.calls.find((call) => call.id === callId)).toMatchObject({
    status: 'cancelled',
    reason: { code: 'user_cancelled', message: 'the visitor started a new chat' },
  });
  const approve = await page.evaluate(
    async (id) =>
      (
        await fetch(`/api/toolgate/calls/${encodeURIComponent(id)}/approve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ inputHash: '0'.repeat(64) }),
        })
      ).status,
    callId,
  );
  expect(approve).toBe(409);
  await expect(page.getByTestId('wallet')).toHaveText('$100.00');
  expect(await playground.serverShop()).toMatchObject({ balance_cents: 10_000, transfers: [] });

  // The new chat works as any other.
  await playground.say('add a cap');
  await playground.settled();
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
});

test('"New chat" with nothing open starts an empty chat, with no notice', async ({ page, playground }) => {
  await playground.open('');
  await playground.say('add a cap');
  await playground.settled();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(playground.calls).toHaveCount(0);
  await expect(page.getByTestId('notice')).toHaveCount(0);
  await expect(playground.transcript).toContainText('Pick a scenario');
});
