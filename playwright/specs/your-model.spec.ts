import { createServer } from 'node:net';
import { PROVIDER_ERRORS } from '../loopback-model.ts';
import { startPlayground } from '../playground-server.ts';
import { expect, Playground, test } from '../playground.ts';

/** A loopback port nothing listens on: it was free a moment ago, and its listener is closed. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

function loopbackUrl(): string {
  const baseURL = process.env.LOOPBACK_MODEL_URL;
  if (baseURL === undefined)
    throw new Error('LOOPBACK_MODEL_URL is not set: the global setup starts the loopback model server.');
  return baseURL;
}

/** Switches to "Your model" and points it at the loopback model server. */
async function useLoopback(playground: Playground): Promise<void> {
  const { page } = playground;
  await page.getByRole('radio', { name: 'Your model' }).check();
  const form = page.getByRole('form', { name: 'Your model' });
  await form.getByLabel('Base URL').fill(loopbackUrl());
  await form.getByLabel('Model').fill('loopback-7b');
  await form.getByRole('button', { name: 'Use this model' }).click();
  await expect(playground.chat).toContainText(`loopback-7b at ${loopbackUrl()}`);
}

test("the model's stream is cut inside a call's arguments: the call is marked not run, and the notice says the stream was cut", async ({
  page,
  playground,
}, testInfo) => {
  await playground.open('');
  await useLoopback(playground);
  await page.getByLabel('Message').fill(`Send $25 to sam@example.com [cut] (${testInfo.testId})`);
  await page.getByLabel('Message').press('Enter');
  await playground.settled();

  await expect(playground.calls).toHaveCount(1);
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'rejected');
  await expect(call).toHaveAttribute('data-reason', 'truncated');
  await expect(call.locator('[data-toolgate="reason"]')).toHaveText(/^Not run: the model’s stream was cut/);
  // What the model had written of the arguments is still shown, not "…".
  await expect(playground.calls.nth(0).getByLabel('Arguments')).toHaveText(
    '{"to": "sam@example.com", "amount_',
  );
  const notice = page.getByTestId('notice').last();
  await expect(notice).toContainText('The model’s stream was cut');
  await expect(notice).not.toContainText('could not be reached');
  await playground.expectStateUnchanged();
  await playground.screenshot('your-model-cut', testInfo);

  // After a reload, the same.
  await page.reload();
  await expect(playground.status(0)).toHaveAttribute('data-status', 'rejected');
  await expect(playground.status(0)).toHaveAttribute('data-reason', 'truncated');
});

test('stopped while the model writes a call: the call is shown cancelled, after a reload too', async ({
  page,
  playground,
}, testInfo) => {
  await playground.open('');
  await useLoopback(playground);
  await page.getByLabel('Message').fill(`Send $25 to sam@example.com [hold] (${testInfo.testId})`);
  await page.getByLabel('Message').press('Enter');
  await expect(playground.calls.nth(0).getByLabel('Arguments')).toContainText('sam@example.com');
  await page.getByRole('button', { name: 'Stop' }).click();
  await playground.settled();

  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'cancelled');
  await expect(call).toHaveAttribute('data-reason', 'user_cancelled');
  await expect(page.getByTestId('notice').last()).toContainText('Stopped');
  await page.reload();
  await expect(playground.status(0)).toHaveAttribute('data-status', 'cancelled');
  await playground.expectStateUnchanged();
});

test('a model setting the server refuses is not kept: not in this browser, not on the server, and the one in use stays', async ({
  page,
  playground,
}) => {
  const baseURL = loopbackUrl();
  await playground.open('');
  await page.getByRole('radio', { name: 'Your model' }).check();
  const form = page.getByRole('form', { name: 'Your model' });

  // A setting the server takes: kept, and in use.
  await form.getByLabel('Base URL').fill(baseURL);
  await form.getByLabel('Model').fill('loopback-7b');
  await form.getByRole('button', { name: 'Use this model' }).click();
  await expect(playground.chat).toContainText(`loopback-7b at ${baseURL}`);

  // One it refuses (a URL, but not http or https): the refusal is shown, and nothing of it is kept.
  await form.getByLabel('Base URL').fill('ftp://models.example.com/v1');
  await form.getByLabel('Model').fill('refused-model');
  await form.getByRole('button', { name: 'Use this model' }).click();
  await expect(form.getByRole('alert')).toContainText('baseURL');
  await expect(playground.chat).toContainText(`loopback-7b at ${baseURL}`);
  expect(await page.evaluate(() => JSON.stringify({ ...localStorage }))).not.toContain('ftp://');
  expect(
    await page.evaluate(async () => (await (await fetch('/api/model')).json()) as unknown),
  ).toMatchObject({ configured: true, baseURL, model: 'loopback-7b' });

  // After a reload the form shows the setting in use, not the refused one.
  await page.reload();
  await expect(form.getByLabel('Base URL')).toHaveValue(baseURL);
  await expect(form.getByLabel('Model')).toHaveValue('loopback-7b');
});

test('a refused first setting leaves the form as it was before it', async ({ page, playground }) => {
  await playground.open('');
  await page.getByRole('radio', { name: 'Your model' }).check();
  const form = page.getByRole('form', { name: 'Your model' });
  const before = {
    baseURL: await form.getByLabel('Base URL').inputValue(),
    model: await form.getByLabel('Model').inputValue(),
  };
  await form.getByLabel('Base URL').fill('ftp://models.example.com/v1');
  await form.getByLabel('Model').fill('refused-model');
  await form.getByRole('button', { name: 'Use this model' }).click();
  await expect(form.getByRole('alert')).toBeVisible();
  expect(await page.evaluate(() => JSON.stringify({ ...localStorage }))).not.toContain('ftp://');

  await page.reload();
  await expect(form.getByLabel('Base URL')).toHaveValue(before.baseURL);
  await expect(form.getByLabel('Model')).toHaveValue(before.model);
});

test('your model answers an HTTP error: the notice gives its status and what the provider said, not that it could not be reached', async ({
  page,
  playground,
}, testInfo) => {
  await playground.open('');
  await useLoopback(playground);
  const notice = page.getByTestId('notice').last().locator('p');

  await playground.say(`Add a tee [status 401] (${testInfo.testId})`);
  await playground.settled();
  await expect(page.getByTestId('notice').last()).toHaveAttribute('data-tone', 'error');
  await expect(notice).toHaveText(
    `Your model answered 401 Unauthorized: ${PROVIDER_ERRORS[401]?.message ?? ''}`,
  );
  await expect(playground.calls).toHaveCount(0);
  await playground.screenshot('your-model-401', testInfo);

  // A long message is shortened, on a word, with an ellipsis.
  await playground.say(`Add a tee [status 500] (${testInfo.testId})`);
  await playground.settled();
  await expect(notice).toHaveText(
    /^Your model answered 500 Internal Server Error: The server had an error while processing your request\. Sorry about that! Upstream trace: .{20,}…$/,
  );
  expect((await notice.textContent())?.length).toBeLessThan(300);
  await expect(page.getByTestId('notice').filter({ hasText: 'could not be reached' })).toHaveCount(0);
  await playground.expectStateUnchanged();
});

test('your model cannot be reached (nothing listens at its address): the notice says so', async ({
  page,
  playground,
}) => {
  await playground.open('');
  await page.getByRole('radio', { name: 'Your model' }).check();
  const form = page.getByRole('form', { name: 'Your model' });
  const closed = await closedPort();
  await form.getByLabel('Base URL').fill(`http://127.0.0.1:${closed}/v1`);
  await form.getByLabel('Model').fill('loopback-7b');
  await form.getByRole('button', { name: 'Use this model' }).click();
  await expect(playground.chat).toContainText(`loopback-7b at http://127.0.0.1:${closed}/v1`);
  await playground.say('Add a tee');
  await playground.settled();
  await expect(page.getByTestId('notice').last().locator('p')).toHaveText(
    /^Your model could not be reached: .*ECONNREFUSED/,
  );
});

test('a restarted server no longer holds your model: the notice says it was not asked, and why, not that it could not be reached', async ({
  page,
}) => {
  test.setTimeout(60_000);
  const server = await startPlayground();
  try {
    const playground = new Playground(page);
    await playground.open('', server.url);
    await useLoopback(playground);
    await server.stop('SIGKILL');
    await server.start();
    await page.reload();
    await playground.say('Add a tee');
    await playground.settled();
    const notice = page.getByTestId('notice').last().locator('p');
    await expect(notice).toHaveText(
      /^Your model was not asked: this server holds no settings for your model .*enter them again under Your model$/,
    );
  } finally {
    await server.stop('SIGKILL');
  }
});
