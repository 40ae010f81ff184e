import { expect, test } from '../playground.ts';

const LIMIT = 4000;

test('a message over the limit stays in the box, says how far over it is, and is not sent until it fits', async ({
  page,
  playground,
}, testInfo) => {
  await playground.open('');
  const box = page.getByLabel('Message');
  const send = page.getByRole('button', { name: 'Send' });
  const posts: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().endsWith('/messages')) posts.push(request.url());
  });

  const long = `add a mug ${'x'.repeat(LIMIT)}`;
  await box.fill(long);
  await box.press('Enter');
  await expect(box).toHaveValue(long);
  // The limit is shown beside the box, and the box says it is not acceptable as it is.
  await expect(page.getByTestId('composer-count')).toHaveText(
    `${long.length.toLocaleString('en-US')} / ${LIMIT.toLocaleString('en-US')}`,
  );
  await expect(page.getByTestId('composer-limit')).toHaveText(
    `Messages can be at most 4,000 characters: remove ${long.length - LIMIT} to send this one.`,
  );
  await expect(box).toHaveAttribute('aria-invalid', 'true');
  await expect(send).toBeDisabled();
  expect(posts).toEqual([]);
  await expect(playground.transcript.locator('[data-role="user"]')).toHaveCount(0);
  await playground.screenshot('composer-over-limit', testInfo);
  // The server holds the same limit, and says so.
  const chat = await playground.chat.getAttribute('data-chat-id');
  const answer = await page.evaluate(
    async ({ chat, text }) => {
      const response = await fetch(`/api/chat/${chat}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    },
    { chat, text: long },
  );
  expect(answer).toEqual({
    status: 400,
    body: {
      error: {
        code: 'too_long',
        message: `a message can be at most 4000 characters; this one has ${long.length}`,
      },
    },
  });

  // Cut to the limit, it is sent as it is.
  const fits = long.slice(0, LIMIT);
  await box.fill(fits);
  await expect(page.getByTestId('composer-limit')).toHaveCount(0);
  await expect(box).not.toHaveAttribute('aria-invalid', 'true');
  await expect(send).toBeEnabled();
  await box.press('Enter');
  await expect(playground.transcript.locator('[data-role="user"]')).toHaveText(fits);
  await expect(box).toHaveValue('');
  await playground.settled();
});

test('a message the server refuses comes back to the box, with the reason shown', async ({
  page,
  playground,
}) => {
  await playground.open('');
  await page.route('**/api/chat/*/messages', (route) =>
    route.fulfill({
      status: 400,
      contentType: 'application/json',
      body: JSON.stringify({
        error: { code: 'malformed', message: 'send { "text": "…" }, 1 to 4000 characters' },
      }),
    }),
  );
  const box = page.getByLabel('Message');
  await box.fill('add two mugs');
  await box.press('Enter');
  await expect(page.getByTestId('composer-error')).toHaveText(
    'Not sent: send { "text": "…" }, 1 to 4000 characters',
  );
  await expect(box).toHaveValue('add two mugs');
  await expect(playground.chat).toHaveAttribute('data-busy', 'false');
  await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled();

  // Once the server takes it, the reason goes and the message is sent.
  await page.unroute('**/api/chat/*/messages');
  await box.press('Enter');
  await expect(playground.transcript.locator('[data-role="user"]')).toHaveText('add two mugs');
  await expect(page.getByTestId('composer-error')).toHaveCount(0);
  await expect(box).toHaveValue('');
});
