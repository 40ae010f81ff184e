import { expect, test } from '../playground.ts';

test('a model setting the server refuses is not kept: not in this browser, not on the server, and the one in use stays', async ({ page, playground }) => {
  const baseURL = process.env.LOOPBACK_MODEL_URL;
  if (baseURL === undefined) throw new Error('LOOPBACK_MODEL_URL is not set: the global setup starts the loopback model server.');
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
  expect(await page.evaluate(async () => (await (await fetch('/api/model')).json()) as unknown)).toMatchObject({ configured: true, baseURL, model: 'loopback-7b' });

  // After a reload the form shows the setting in use, not the refused one.
  await page.reload();
  await expect(form.getByLabel('Base URL')).toHaveValue(baseURL);
  await expect(form.getByLabel('Model')).toHaveValue('loopback-7b');
});

test('a refused first setting leaves the form as it was before it', async ({ page, playground }) => {
  await playground.open('');
  await page.getByRole('radio', { name: 'Your model' }).check();
  const form = page.getByRole('form', { name: 'Your model' });
  const before = { baseURL: await form.getByLabel('Base URL').inputValue(), model: await form.getByLabel('Model').inputValue() };
  await form.getByLabel('Base URL').fill('ftp://models.example.com/v1');
  await form.getByLabel('Model').fill('refused-model');
  await form.getByRole('button', { name: 'Use this model' }).click();
  await expect(form.getByRole('alert')).toBeVisible();
  expect(await page.evaluate(() => JSON.stringify({ ...localStorage }))).not.toContain('ftp://');

  await page.reload();
  await expect(form.getByLabel('Base URL')).toHaveValue(before.baseURL);
  await expect(form.getByLabel('Model')).toHaveValue(before.model);
});
