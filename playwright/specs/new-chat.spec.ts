import { expect, Playground, test } from '../playground.ts';

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

test('a chat left in another tab cannot propose any more: the first tab follows to the new chat, and a message to the old one is refused', async ({
  page,
  playground,
}) => {
  await playground.open('');
  await playground.run('A transfer that needs approval', 'Send $25 to sam@example.com for the camping trip.');
  await expect(playground.status(0)).toHaveAttribute('data-status', 'awaiting_approval');
  const oldChat = (await playground.chat.getAttribute('data-chat-id')) ?? '';

  // The same visitor, in a second tab, starts a new chat.
  const second = new Playground(await page.context().newPage());
  await second.open('');
  await expect(second.chat).toHaveAttribute('data-chat-id', oldChat);
  await second.page.getByRole('button', { name: 'New chat' }).click();
  await expect(second.chat).not.toHaveAttribute('data-chat-id', oldChat);
  const newChat = (await second.chat.getAttribute('data-chat-id')) ?? '';

  // The first tab shows the chat the visitor has open now, with the notice that the transfer was cancelled.
  await expect(playground.chat).toHaveAttribute('data-chat-id', newChat);
  await expect(page.getByTestId('notice')).toHaveText(/transfer_funds.*awaited your approval.*cancelled/);
  await expect(page.getByTestId('budget')).toHaveText(
    'Transfers in this chat: $0.00 of $60.00 used · $60.00 left',
  );

  // A page that did not follow (a script, a stale tab) is refused: nothing is proposed in the old chat.
  const refused = await page.evaluate(async (chat) => {
    const response = await fetch(`/api/chat/${chat}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'send 5 dollars to sam@example.com' }),
    });
    return { status: response.status, body: (await response.json()) as { error: { code: string } } };
  }, oldChat);
  expect(refused).toMatchObject({ status: 409, body: { error: { code: 'left' } } });
  const calls = await page.evaluate(
    async (session) =>
      (
        (await (await fetch(`/api/toolgate/sessions/${session}/calls`)).json()) as {
          calls: { status: string }[];
        }
      ).calls,
    oldChat,
  );
  expect(calls.map((call) => call.status)).toEqual(['cancelled']);

  // Both tabs go on in the new chat.
  await playground.say('add a cap');
  await playground.settled();
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await expect(second.status(0)).toHaveAttribute('data-status', 'committed');
});
