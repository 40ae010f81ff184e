import type { Page } from '@playwright/test';
import { expect, test } from '../playground.ts';

const LARGE = 'A large transfer your manager approves';
const PROMPT = 'Send $80 to the roofer, roofer@example.com, for the repair.';
const README_PICTURE = `
  [data-testid="outbox-slack"], [data-testid="outbox-mail"] {
    position: fixed; inset: 0 auto auto 0; z-index: 2147483647; width: 700px; max-width: none;
    box-sizing: border-box; margin: 0; padding: 12px; background: #fff;
  }
  [data-testid="outbox-mail"] iframe { height: 440px; }
  [data-testid="outbox-mail"] details { display: none; }
`;

/** Reads the Approvals view as `who` (the page's demo switch: you, the manager, finance). */
async function viewAs(page: Page, who: 'you' | 'the manager' | 'finance') {
  const approvals = page.getByTestId('approvals');
  await approvals.getByRole('radio', { name: who, exact: true }).check();
  return approvals.locator('[data-toolgate="inbox"]');
}

/** The Outbox's notices of one kind to one person (`you`, `the manager`, `finance`). */
const notices = (page: Page, kind: string, to: string) =>
  page.getByTestId('outbox').locator(`[data-testid="outbox-notice"][data-kind="${kind}"][data-to="${to}"]`);

test('a large transfer waits for the manager: the person may not approve it, the manager approves it from their inbox, and the Outbox shows who was asked and how it ended', async ({
  page,
  playground,
}, testInfo) => {
  // Seen as the visitor, the Approvals view says the large transfer is not theirs to approve.
  await viewAs(page, 'you');
  await expect(page.getByTestId('approvals-you')).toContainText(
    'A large transfer is your manager’s to approve.',
  );

  await playground.run(LARGE, PROMPT);
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(playground.calls.nth(0).getByTestId('asked-of-others')).toHaveText(
    'Waiting for you as the manager, in Approvals. You asked for this transfer, so the server refuses your own Approve.',
  );

  // The person's own Approve reaches the server, which refuses it and says why; nothing runs.
  await call.getByRole('button', { name: 'Approve', exact: true }).click();
  const refusal = call.locator('[data-toolgate="refusal"]');
  await expect(refusal).toHaveAttribute('data-code', 'forbidden');
  await expect(refusal).toContainText('asked for this call and may not approve it: another person must');
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(page.getByTestId('wallet')).toHaveText('$100.00');

  // The Outbox asked the manager, with a link to the confirm page.
  const asked = notices(page, 'asked', 'the manager');
  await expect(asked).toHaveCount(1);
  await expect(asked).toContainText('large_transfer');
  await expect(asked).toContainText('"amount_cents":8000');
  const link = (await asked.getByRole('link', { name: 'Open the confirm page' }).getAttribute('href')) ?? '';
  expect(link).toMatch(/\/api\/toolgate\/links\/[\w-]+/);

  // The same notice as Slack would show it: the input, and buttons that only work in Slack.
  await asked.getByRole('radio', { name: 'Slack card', exact: true }).check();
  const card = asked.getByRole('group', { name: 'Slack card' });
  await expect(card).toContainText('asks to run large_transfer');
  await expect(card.locator('pre')).toContainText('"to": "roofer@example.com"');
  await expect(card.locator('pre')).toContainText('"amount_cents": 8000');
  await expect(card.getByRole('button', { name: 'Approve in Slack' })).toBeDisabled();
  await expect(card.getByRole('button', { name: 'Deny in Slack' })).toBeDisabled();
  // The pictures in @toolgate/channels' README are these two views, drawn as wide as a mail client's
  // reading pane: copy them from artifacts/screenshots to packages/channels/docs when the card or mail changes.
  await playground.screenshot('channels-slack-card', testInfo, { of: card, style: README_PICTURE });
  // And as a mail: its subject, and its HTML drawn in a sandbox with the input and the same link.
  await asked.getByRole('radio', { name: 'Mail', exact: true }).check();
  await expect(card).toHaveCount(0);
  const mail = asked.getByRole('group', { name: 'Mail' });
  await expect(mail).toContainText('Subject: Approve large_transfer?');
  await expect(mail.locator('iframe')).toHaveAttribute('sandbox', '');
  const html = mail.frameLocator('iframe');
  await expect(html.locator('pre')).toContainText('"to": "roofer@example.com"');
  await expect(html.locator(`a[href="${link}"]`)).toHaveCount(1);
  await playground.screenshot('channels-mail', testInfo, { of: mail, style: README_PICTURE });
  await asked.getByRole('radio', { name: 'Notice', exact: true }).check();
  await expect(mail).toHaveCount(0);

  // Opening the link shows the call and decides nothing (a mail scanner opens links too).
  const confirm = await page.context().newPage();
  const opened = await confirm.goto(link);
  expect(opened?.status()).toBe(200);
  await expect(confirm.getByRole('heading', { level: 1 })).toHaveText('Approve large_transfer?');
  await expect(confirm.locator('pre')).toContainText('"to": "roofer@example.com"');
  await expect(confirm.getByRole('button', { name: 'Approve' })).toBeVisible();
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(notices(page, 'decided', 'the manager')).toHaveCount(0);

  // The manager's inbox holds the transfer with its input; approving it there runs it once.
  const inbox = await viewAs(page, 'the manager');
  const waiting = inbox.locator('[data-toolgate="call"]');
  await expect(waiting).toHaveCount(1);
  await expect(waiting).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(waiting.locator('[data-toolgate="input"]')).toContainText('roofer@example.com');
  await expect(waiting.locator('[data-toolgate="input"]')).toContainText('8000');
  await playground.screenshot('approver-inbox', testInfo);
  await waiting.getByRole('button', { name: 'Approve', exact: true }).click();

  await playground.settled();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await expect(inbox.locator('[data-toolgate="inbox-empty"]')).toBeVisible();
  await expect(page.getByTestId('wallet')).toHaveText('$20.00');
  await expect(playground.assistantTexts.last()).toHaveText(
    'Your manager approved it: sent $80.00 to roofer@example.com (tr_501).',
  );
  expect(await playground.serverShop()).toMatchObject({
    balance_cents: 2000,
    transfers: [{ transfer_id: 'tr_501', to: 'roofer@example.com', amount_cents: 8000 }],
  });

  // The Outbox tells the manager how it ended, and the link now says there is nothing to decide.
  await expect(notices(page, 'decided', 'the manager')).toHaveCount(1);
  await expect(notices(page, 'decided', 'the manager')).toContainText(
    'large_transfer approved by the manager',
  );
  await playground.screenshot('approver-outbox', testInfo);
  await confirm.reload();
  await expect(confirm.getByRole('button', { name: 'Approve' })).toHaveCount(0);
  await expect(confirm.getByRole('status')).toBeVisible();
  await confirm.close();
});

test("the manager approves on the link's confirm page: the POST decides as the manager, once, and the person's card ends committed", async ({
  page,
  playground,
}) => {
  await playground.run(LARGE, PROMPT);
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  const asked = notices(page, 'asked', 'the manager');
  await expect(asked).toHaveCount(1);
  const link = (await asked.getByRole('link').getAttribute('href')) ?? '';

  const confirm = await page.context().newPage();
  await confirm.goto(link);
  await confirm.getByRole('button', { name: 'Approve' }).click();
  await expect(confirm.getByRole('status')).toBeVisible();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('wallet')).toHaveText('$20.00');

  // A second press (the answer page sent back) decides nothing more.
  await confirm.goto(link);
  await expect(confirm.getByRole('button', { name: 'Approve' })).toHaveCount(0);
  const again = await page.request.post(link, { data: { vote: 'approve' } });
  expect(again.status()).toBe(409);
  expect(await playground.serverShop()).toMatchObject({
    balance_cents: 2000,
    transfers: [{ transfer_id: 'tr_501' }],
  });
  await confirm.close();
});
