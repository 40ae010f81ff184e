import { expect, test, type Page } from '@playwright/test';
import { startExample, type ExampleServer } from './example-server.ts';

// Each test starts a server of its own (its process, its ledger file), so they can run in parallel.
let server: ExampleServer;
test.beforeEach(async () => {
  server = await startExample();
});
test.afterEach(async () => {
  await server.stop('SIGKILL');
});

async function open(page: Page): Promise<void> {
  await page.goto(server.url);
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeVisible();
}

async function say(page: Page, text: string): Promise<void> {
  const input = page.getByRole('textbox', { name: 'Message' });
  await input.fill(text);
  await input.press('Enter');
}

const tool = (page: Page, index = 0) => page.locator('.tool').nth(index);
const statusOf = (page: Page, index = 0) => tool(page, index).locator('[data-toolgate="call"]');
/** useChat's own buttons, as the AI SDK's example renders them. */
const chatButton = (page: Page, name: 'Approve' | 'Deny', index = 0) =>
  tool(page, index).locator('.approval').getByRole('button', { name });
const ran = (tool: string) => server.effects().filter((effect) => effect.tool === tool);

test("approving in useChat's own button runs the payment once, and the part shows the ledger's output and status", async ({
  page,
}) => {
  await open(page);
  await say(page, 'Pay Bob $5000');
  await expect(tool(page)).toHaveAttribute('data-state', 'approval-requested');
  await expect(statusOf(page)).toHaveAttribute('data-status', 'awaiting_approval');
  expect(ran('processPayment')).toEqual([]);

  await chatButton(page, 'Approve').click();
  await expect(tool(page)).toHaveAttribute('data-state', 'output-available');
  await expect(tool(page).locator('.output')).toHaveText('Payment of $5000 to Bob processed.');
  await expect(statusOf(page)).toHaveAttribute('data-status', 'committed');
  await expect(page.locator('.message.assistant').last()).toContainText(
    'processPayment: Payment of $5000 to Bob processed.',
  );
  expect(ran('processPayment')).toEqual([
    { tool: 'processPayment', input: { amount: 5000, recipient: 'Bob' } },
  ]);
});

test('the approving request sent again runs nothing again', async ({ page }) => {
  await open(page);
  await say(page, 'Pay Bob $5000');
  const approving = page.waitForRequest(
    (request) =>
      request.url().endsWith('/api/chat') && (request.postData() ?? '').includes('approval-responded'),
  );
  await chatButton(page, 'Approve').click();
  const body = (await approving).postDataJSON() as unknown;
  await expect(statusOf(page)).toHaveAttribute('data-status', 'committed');

  const replay = await page.request.post(`${server.url}/api/chat`, { data: body });
  expect(replay.status()).toBe(200);
  expect(await replay.text()).toContain('Payment of $5000 to Bob processed.');
  expect(ran('processPayment')).toHaveLength(1);
});

/** Changes the tool input of every answered part of the next chat request only, as a tampering proxy would. */
async function tamperNextApproval(page: Page): Promise<void> {
  await page.route(
    '**/api/chat',
    async (route) => {
      const body = route.request().postDataJSON() as {
        messages: { parts: { state?: string; input?: unknown }[] }[];
      };
      for (const part of body.messages.flatMap((message) => message.parts)) {
        if (part.state === 'approval-responded') part.input = { amount: 9_999_999, recipient: 'Mallory' };
      }
      await route.continue({ postData: JSON.stringify(body) });
    },
    { times: 1 },
  );
}

/** The refused approval is shown as not approved, with both sets of buttons offered again. */
async function expectAskedAgain(page: Page): Promise<void> {
  const refusal = statusOf(page).locator('[data-toolgate="refusal"]');
  await expect(refusal).toHaveAttribute('data-code', 'stale');
  await expect(refusal).toContainText('Not approved');
  await expect(statusOf(page)).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(tool(page)).toHaveAttribute('data-state', 'approval-requested');
  await expect(chatButton(page, 'Approve')).toBeVisible();
  await expect(chatButton(page, 'Deny')).toBeVisible();
  await expect(statusOf(page).locator('[data-action="approve"]')).toBeVisible();
}

test('an approval whose input was changed on its way is refused stale, nothing runs, the page asks again, and a new press runs it once', async ({
  page,
}) => {
  await open(page);
  await say(page, 'Pay Bob $5000');
  await tamperNextApproval(page);
  await chatButton(page, 'Approve').click();

  await expectAskedAgain(page);
  await expect(page.locator('.message.assistant').last()).toContainText('refused (stale)');
  expect(server.effects()).toEqual([]);

  await chatButton(page, 'Approve').click();
  await expect(tool(page)).toHaveAttribute('data-state', 'output-available');
  await expect(tool(page).locator('.output')).toHaveText('Payment of $5000 to Bob processed.');
  await expect(statusOf(page)).toHaveAttribute('data-status', 'committed');
  expect(ran('processPayment')).toEqual([
    { tool: 'processPayment', input: { amount: 5000, recipient: 'Bob' } },
  ]);
});

test("after a refused approval, the person's next message runs nothing: the call waits for a new press", async ({
  page,
}) => {
  await open(page);
  await say(page, 'Pay Bob $5000');
  await tamperNextApproval(page);
  await chatButton(page, 'Approve').click();
  await expectAskedAgain(page);

  await say(page, 'Thanks');
  await expect(page.locator('.message.assistant')).toHaveCount(2);
  await expect(page.locator('.message.assistant').last()).toContainText('I can check the weather');
  expect(server.effects()).toEqual([]);
  await expect(statusOf(page)).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(tool(page)).toHaveAttribute('data-state', 'approval-requested');
});

test('after a reload and a server restart mid-approval, the approval still runs the payment, once', async ({
  page,
}) => {
  // Two server starts in one test.
  test.setTimeout(150_000);
  await open(page);
  await say(page, 'Pay Bob $5000');
  await expect(statusOf(page)).toHaveAttribute('data-status', 'awaiting_approval');
  await page.reload();
  await server.stop('SIGKILL');
  await server.start();
  await expect(tool(page)).toHaveAttribute('data-state', 'approval-requested');

  await chatButton(page, 'Approve').click();
  await expect(statusOf(page)).toHaveAttribute('data-status', 'committed');
  await expect(tool(page).locator('.output')).toHaveText('Payment of $5000 to Bob processed.');
  expect(ran('processPayment')).toHaveLength(1);
});

test("another browser gets nothing: its copy of the chat, approval and all, runs nothing and shows none of the first user's calls", async ({
  page,
  browser,
}) => {
  await open(page);
  await say(page, 'Pay Bob $5000');
  await expect(statusOf(page)).toHaveAttribute('data-status', 'awaiting_approval');
  const saved = JSON.parse((await page.evaluate(() => localStorage.getItem('ai-sdk-chat'))) ?? '{}') as {
    id: string;
    messages: { parts: { state?: string; approval?: { approved?: boolean } }[] }[];
  };
  for (const part of saved.messages.flatMap((message) => message.parts)) {
    if (part.state === 'approval-requested') {
      part.state = 'approval-responded';
      if (part.approval !== undefined) part.approval.approved = true;
    }
  }

  const other = await browser.newContext();
  const stranger = await other.newPage();
  await stranger.goto(server.url);
  const response = await stranger.request.post(`${server.url}/api/chat`, {
    data: { id: saved.id, messages: saved.messages, trigger: 'submit-message' },
  });
  const text = await response.text();
  expect(text).not.toContain('awaiting_approval');
  expect(text).not.toContain('"committed"');
  expect(server.effects()).toEqual([]);
  await expect(stranger.locator('.tool')).toHaveCount(0);
  await other.close();

  // The first user's call still waits for them, and their approval still works.
  await chatButton(page, 'Approve').click();
  await expect(statusOf(page)).toHaveAttribute('data-status', 'committed');
  expect(ran('processPayment')).toHaveLength(1);
});

test('a value of the wrong type is refused with its path, in the tool part and to the model', async ({
  page,
}) => {
  await open(page);
  await say(page, 'Pay Bob twelve fifty');
  await expect(statusOf(page)).toHaveAttribute('data-status', 'rejected');
  await expect(statusOf(page)).toHaveAttribute('data-reason', 'invalid_arguments');
  await expect(statusOf(page).locator('[data-toolgate="reason"] li')).toContainText('/amount');
  await expect(tool(page)).toHaveAttribute('data-state', 'output-error');
  await expect(page.locator('.message.assistant').last()).toContainText('rejected (invalid_arguments)');
  expect(server.effects()).toEqual([]);
});

test("streamText's multi-step loop still runs: a small payment runs on its own, and the model goes on to the next call", async ({
  page,
}) => {
  await open(page);
  const chats: string[] = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/api/chat')) chats.push(request.url());
  });
  await say(page, 'Pay Bob $50, then tell me the weather in Paris');
  await expect(tool(page, 1)).toHaveAttribute('data-state', 'approval-requested');
  await expect(tool(page, 0)).toHaveAttribute('data-state', 'output-available');
  await expect(statusOf(page, 0)).toHaveAttribute('data-status', 'committed');
  expect(chats).toHaveLength(1);
  expect(ran('processPayment')).toHaveLength(1);

  // toolgate's own Approve moves useChat's part too. It takes a press once it is live (not aria-disabled).
  const approve = statusOf(page, 1).locator('[data-action="approve"]');
  await expect(approve).not.toHaveAttribute('aria-disabled', 'true');
  await approve.click();
  await expect(tool(page, 1)).toHaveAttribute('data-state', 'output-available');
  await expect(statusOf(page, 1)).toHaveAttribute('data-status', 'committed');
  await expect(tool(page, 1).locator('.output')).toContainText('Weather in Paris:');
  expect(ran('getWeatherInformation')).toEqual([{ tool: 'getWeatherInformation', input: { city: 'Paris' } }]);
});

test("denying in useChat's own button cancels the call in the ledger, and both the part and the status say so", async ({
  page,
}) => {
  await open(page);
  await say(page, 'What is the weather in Lima?');
  await chatButton(page, 'Deny').click();
  await expect(tool(page)).toHaveAttribute('data-state', 'output-denied');
  await expect(statusOf(page)).toHaveAttribute('data-status', 'cancelled');
  await expect(statusOf(page)).toHaveAttribute('data-reason', 'approval_denied');
  await expect(page.locator('.message.assistant').last()).toContainText('You said no');
  expect(server.effects()).toEqual([]);
});
