import type { Page } from '@playwright/test';
import { LOOPBACK_MODEL, type LoggedRequest } from '../loopback-model.ts';
import { expect, test } from '../playground.ts';

const API_KEY = 'sk-loopback-test-key';

/** Everything the page's JavaScript can still reach as text: a heap snapshot, taken after a garbage collection. */
async function heapText(page: Page): Promise<string> {
  const cdp = await page.context().newCDPSession(page);
  const chunks: string[] = [];
  cdp.on('HeapProfiler.addHeapSnapshotChunk', ({ chunk }) => chunks.push(chunk));
  await cdp.send('HeapProfiler.enable');
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  await cdp.detach();
  return chunks.join('');
}

test('your model is called from the server: parallel calls from an OpenAI-compatible endpoint, the malformed one rejected, every result sent back, and the key never in the page', async ({
  page,
  playground,
  request,
}, testInfo) => {
  // Two heap snapshots of the page, each seconds on a busy machine.
  test.setTimeout(60_000);
  const baseURL = process.env.LOOPBACK_MODEL_URL;
  if (baseURL === undefined)
    throw new Error('LOOPBACK_MODEL_URL is not set: the global setup starts the loopback model server.');
  // Every response the page receives, to look for the key in them.
  const bodies: Promise<string>[] = [];
  page.on('response', (response) => {
    if (!response.url().includes('/events')) bodies.push(response.text().catch(() => ''));
  });

  await page.getByRole('radio', { name: 'Your model' }).check();
  const form = page.getByRole('form', { name: 'Your model' });
  await form.getByLabel('Base URL').fill(baseURL);
  await form.getByLabel('Model').fill(LOOPBACK_MODEL);
  await form.getByLabel('API key').fill(API_KEY);
  await form.getByRole('button', { name: 'Use this model' }).click();
  await expect(playground.chat).toContainText(`${LOOPBACK_MODEL} at ${baseURL}`);
  // The key went to the server once; the field was emptied, and the page keeps it nowhere.
  await expect(form.getByLabel('API key')).toHaveValue('');
  const inPage = await page.evaluate(() =>
    JSON.stringify({
      local: { ...localStorage },
      session: { ...sessionStorage },
      html: document.documentElement.outerHTML,
      cookie: document.cookie,
    }),
  );
  expect(inPage).not.toContain(API_KEY);
  const heap = await heapText(page);
  // The snapshot does hold the page's strings (the model's name is on screen), so finding no key means something.
  expect(heap).toContain(LOOPBACK_MODEL);
  expect(heap).not.toContain(API_KEY);

  const message = `Add a tee, two maps and a beanie (${testInfo.testId}).`;
  await page.getByLabel('Message').fill(message);
  await page.getByLabel('Message').press('Enter');
  await expect(playground.transcript.locator('[data-role="user"]')).toHaveText(message);
  await playground.settled();

  await expect(playground.calls).toHaveCount(3);
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await expect(playground.status(1)).toHaveAttribute('data-status', 'committed');
  await expect(playground.status(2)).toHaveAttribute('data-status', 'rejected');
  await expect(playground.status(2)).toHaveAttribute('data-reason', 'invalid_json');
  await playground.expectChanges(2);
  await expect(playground.appState.getByRole('row', { name: /Trail tee 1 \$24\.00/ })).toBeVisible();
  await expect(playground.appState.getByRole('row', { name: /Trail map 2 \$12\.00/ })).toBeVisible();
  await expect(playground.appState).not.toContainText('Rib beanie');

  // The model's second answer names each result it received, by the ids the model gave the calls.
  const ids = await playground.calls.evaluateAll((cards) =>
    cards.map((card) => card.getAttribute('data-model-id')),
  );
  await expect(playground.assistantTexts.last()).toHaveText(
    `I received 3 results: ${ids[0]} ok, ${ids[1]} ok, ${ids[2]} refused (invalid_json).`,
  );

  // What the playground's server sent the model: the key as a bearer token, the tools, and one tool message per call id, in order.
  const log = (await (await request.get(new URL('/__requests', baseURL).href)).json()) as LoggedRequest[];
  const ours = log.filter((entry) =>
    entry.body.messages.some((m) => m.role === 'user' && m.content === message),
  );
  expect(ours).toHaveLength(2);
  for (const entry of ours) {
    expect(entry.authorization).toBe(`Bearer ${API_KEY}`);
    expect(entry.body.model).toBe(LOOPBACK_MODEL);
    expect(entry.body.stream).toBe(true);
    expect(entry.body.tools?.map((tool) => tool.function.name)).toEqual([
      'add_to_cart',
      'checkout',
      'apply_coupon',
      'find_delivery_slot',
      'transfer_funds',
      'large_transfer',
      'wire_funds',
      'track_order',
      'pay_by_card',
      'show_product',
    ]);
  }
  const second = ours[1]?.body.messages ?? [];
  const assistant = second.findLast((m) => m.role === 'assistant');
  expect(assistant?.tool_calls?.map((call) => [call.id, call.function.arguments])).toEqual([
    [ids[0], '{"sku": "tee", "quantity": 1}'],
    [ids[1], '{"sku": "map", "quantity": 2}'],
    [ids[2], '{"sku": "beanie", "quantity": 1'],
  ]);
  const replies = second.filter((m) => m.role === 'tool');
  expect(replies.map((reply) => reply.tool_call_id)).toEqual(ids);
  expect(String(replies[2]?.content)).toContain('rejected (invalid_json)');

  // After the whole exchange, still nowhere in the page, and in no response it received.
  expect(
    await page.evaluate(() =>
      JSON.stringify({
        local: { ...localStorage },
        session: { ...sessionStorage },
        html: document.documentElement.outerHTML,
      }),
    ),
  ).not.toContain(API_KEY);
  expect(await heapText(page)).not.toContain(API_KEY);
  const received = await Promise.all(bodies);
  expect(received.length).toBeGreaterThan(3);
  expect(received.filter((body) => body.includes(API_KEY))).toEqual([]);
  await playground.screenshot('real-model', testInfo);
});
