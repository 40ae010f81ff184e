import { createHash } from 'node:crypto';
import { expect, Playground, test } from '../playground.ts';

const TRANSFER = 'A transfer that needs approval';
const PROMPT = 'Send $25 to sam@example.com for the camping trip.';
/** The SHA-256 of the canonical JSON (RFC 8785) of the input the person is shown: what Approve sends. */
const SHOWN_HASH = createHash('sha256')
  .update('{"amount_cents":2500,"memo":"Camping trip","to":"sam@example.com"}')
  .digest('hex');

/** The audit timeline's rows of one move (a refusal is a row that stays where it was: `executing → executing`). */
const moves = (playground: Playground, from: string, to: string) =>
  playground.page
    .getByTestId('audit')
    .locator('li')
    .filter({ hasText: `${from} → ${to}` });

test('a transfer awaiting approval is still there after a reload; approved, it runs once and the wallet changes once', async ({
  page,
  playground,
}, testInfo) => {
  await playground.run(TRANSFER, PROMPT);
  await expect(playground.status(0)).toHaveAttribute('data-status', 'awaiting_approval');
  const id = await playground.calls.nth(0).getAttribute('data-call-id');

  await page.reload();
  await expect(playground.calls).toHaveCount(1);
  const call = playground.status(0);
  await expect(playground.calls.nth(0)).toHaveAttribute('data-call-id', id ?? '');
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  // The timeline kept the call's history from before the reload.
  await expect(moves(playground, 'validated', 'awaiting_approval')).toHaveCount(1);
  await playground.screenshot('reload-awaiting-approval', testInfo);

  await call.getByRole('button', { name: 'Approve' }).click();
  await playground.settled();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await playground.expectChanges(1);
  await expect(page.getByTestId('wallet')).toHaveText('$75.00');
  await expect(playground.assistantTexts.last()).toHaveText('Sent $25.00 to sam@example.com (tr_501).');
  await expect(moves(playground, 'awaiting_approval', 'executing')).toHaveCount(1);
  await expect(moves(playground, 'executing', 'committed')).toHaveCount(1);
  expect(await playground.serverShop()).toMatchObject({
    balance_cents: 7500,
    transfers: [{ transfer_id: 'tr_501', to: 'sam@example.com', amount_cents: 2500 }],
  });
  expect(await playground.pageShop()).toEqual(await playground.serverShop());
});

test('two tabs of one browser press Approve together: the transfer runs once, and both tabs show it committed', async ({
  context,
  playground,
}, testInfo) => {
  await playground.run(TRANSFER, PROMPT);
  await expect(playground.status(0)).toHaveAttribute('data-status', 'awaiting_approval');
  const other = new Playground(await context.newPage());
  await other.open();
  await expect(other.status(0)).toHaveAttribute('data-status', 'awaiting_approval');

  // Both clicks, as near together as two tabs allow. A tab that has already heard of the other's
  // approval has no Approve button left to press, so it may send nothing: count what was sent.
  const sent: string[] = [];
  for (const tab of [playground, other]) {
    tab.page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/approve')) sent.push(request.url());
    });
  }
  // Pressed in the page without waiting: a tab whose button has already gone presses nothing.
  const approve = (tab: Playground) =>
    tab.page.evaluate(() => {
      const buttons = [
        ...document.querySelectorAll<HTMLButtonElement>(
          '[data-testid="tool-call"] [data-toolgate="call"] button[data-action="approve"]',
        ),
      ];
      buttons[0]?.click();
    });
  await Promise.all([approve(playground), approve(other)]);

  for (const tab of [playground, other]) {
    await expect(tab.status(0)).toHaveAttribute('data-status', 'committed');
    await expect(tab.page.getByTestId('wallet')).toHaveText('$75.00');
    await expect(moves(tab, 'awaiting_approval', 'executing')).toHaveCount(1);
    await expect(moves(tab, 'executing', 'committed')).toHaveCount(1);
    expect(await tab.pageShop()).toEqual(await tab.serverShop());
  }
  expect(await playground.serverShop()).toMatchObject({
    balance_cents: 7500,
    transfers: [{ transfer_id: 'tr_501' }],
  });
  // An approval that came second was refused, and says so in the trail (beside the notices the
  // server delivered about the call, which stay where the call was too).
  expect(sent.length).toBeGreaterThanOrEqual(1);
  await expect(
    playground.page
      .getByTestId('audit')
      .locator('li')
      .filter({ hasText: /(executing → executing|committed → committed)/ })
      .filter({ hasNotText: /notice_(delivered|failed)/ }),
  ).toHaveCount(sent.length - 1);
  await other.screenshot('two-tabs-second', testInfo);
});

test("forged decisions are refused and nothing runs: another input hash, another browser's call, no session cookie; the timeline shows the refusals", async ({
  browser,
  page,
  playground,
}, testInfo) => {
  await playground.run(TRANSFER, PROMPT);
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  const id = (await playground.calls.nth(0).getAttribute('data-call-id')) ?? '';
  const chat = (await playground.chat.getAttribute('data-chat-id')) ?? '';

  const post = (
    target: Playground,
    path: string,
    body: unknown,
    credentials: RequestCredentials = 'same-origin',
  ) =>
    target.page.evaluate(
      async ({ path, body, credentials }) => {
        const response = await fetch(path, {
          method: 'POST',
          credentials,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as unknown };
      },
      { path, body, credentials },
    );
  const approvePath = `/api/toolgate/calls/${encodeURIComponent(id)}/approve`;

  // From this page: an approval for other arguments than the call holds.
  expect(await post(playground, approvePath, { inputHash: 'f'.repeat(64) })).toEqual({
    status: 409,
    body: { error: { code: 'stale', message: expect.stringContaining('other arguments') } },
  });
  // From this page without its cookie: nobody.
  expect(await post(playground, approvePath, { inputHash: SHOWN_HASH }, 'omit')).toEqual({
    status: 401,
    body: { error: { code: 'unauthenticated', message: expect.any(String) } },
  });

  // Another browser (its own cookie, its own chat) cannot see this chat's calls, nor decide them, even with the right hash.
  const intruderContext = await browser.newContext();
  const intruder = new Playground(await intruderContext.newPage());
  await intruder.open();
  const peek = await intruder.page.evaluate(
    async (session) => (await fetch(`/api/toolgate/sessions/${session}/calls`)).status,
    chat,
  );
  expect(peek).toBe(403);
  expect(await post(intruder, approvePath, { inputHash: SHOWN_HASH })).toEqual({
    status: 404,
    body: { error: { code: 'not_found', message: expect.any(String) } },
  });
  expect(await post(intruder, `/api/toolgate/calls/${encodeURIComponent(id)}/deny`, {})).toMatchObject({
    status: 404,
  });
  await expect(intruder.calls).toHaveCount(0);
  await intruderContext.close();

  // Nothing ran: the call still waits, the shop is as it was, here and on the server.
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  await playground.expectStateUnchanged();
  expect(await playground.serverShop()).toMatchObject({ balance_cents: 10_000, transfers: [] });
  // Each refusal that reached the gate is in the audit trail, under the call it was about.
  const refusals = page.getByTestId('audit').locator('li[data-to="awaiting_approval"]');
  await expect(
    refusals.filter({ hasText: 'awaiting_approval → awaiting_approval' }).filter({ hasText: 'stale' }),
  ).toHaveCount(1);
  await expect(
    refusals.filter({ hasText: 'awaiting_approval → awaiting_approval' }).filter({ hasText: 'forbidden' }),
  ).toHaveCount(2);
  await playground.screenshot('forged-refused', testInfo);

  // The person's own approval still works.
  await call.getByRole('button', { name: 'Approve' }).click();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('wallet')).toHaveText('$75.00');
});
