import type { Request } from '@playwright/test';
import { expect, test, type Playground } from '../playground.ts';

/** The audit timeline's moves of `show_product` into `to`. */
const moves = (playground: Playground, to: string) =>
  playground.page
    .getByTestId('audit')
    .locator('li')
    .filter({ hasText: 'show_product' })
    .filter({ hasText: `→ ${to}` });

/** Lets the page render what its gates did by now: the audit timeline takes in moves once a frame. */
const twoFrames = (playground: Playground) =>
  playground.page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
  );

for (const [how, start] of [
  [
    'its scenario',
    (playground: Playground) =>
      playground.run('A tool that runs in your browser', 'Show me the steel bottle.'),
  ],
  ['a typed message', (playground: Playground) => playground.say('show me the mug')],
] as const) {
  test(`a reload after show_product committed (from ${how}) shows the call as it ended, and runs nothing again`, async ({
    page,
    playground,
  }, testInfo) => {
    test.setTimeout(60_000);
    await playground.open('');
    await start(playground);
    await playground.settled();
    const product = how === 'a typed message' ? 'Enamel camp mug $12.50' : 'Steel bottle $22.00';
    await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
    await expect(page.getByTestId('spotlight')).toContainText(product);
    await expect(moves(playground, 'executing')).toHaveCount(1);
    await expect(playground.verdict).toHaveAttribute('data-verdict', 'view');
    const answer = await playground.assistantTexts.last().textContent();
    const trail = await page.getByTestId('audit').locator('li.audit-row').allTextContents();

    const results: Request[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/tool-results')) results.push(request);
    });
    await page.reload();
    await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
    await expect(playground.calls.nth(0).locator('.call-output')).toContainText('"shown":true');
    await playground.settled();
    await twoFrames(playground);
    // Shown as it was left, by the record of the call, not by running it again: the same moves in
    // the timeline, once each, and no new result sent.
    await expect(page.getByTestId('spotlight')).toHaveCount(1);
    await expect(page.getByTestId('spotlight')).toContainText(product);
    await expect(moves(playground, 'executing')).toHaveCount(1);
    await expect(moves(playground, 'committed')).toHaveCount(1);
    expect(await page.getByTestId('audit').locator('li.audit-row').allTextContents()).toEqual(trail);
    expect(results).toHaveLength(0);
    // The verdict names that call still: the page's view changed, and the shop did not.
    await expect(playground.verdict).toHaveAttribute('data-verdict', 'view');
    await expect(playground.verdict).toContainText(
      'Committed: show_product changed only this page’s view, not the shop.',
    );
    await expect(playground.verdict).toHaveAttribute('data-changes', '0');
    await expect(playground.calls).toHaveCount(1);
    await expect(playground.assistantTexts.last()).toHaveText(answer ?? '');
    await playground.screenshot(
      `browser-tool-reloaded-${how === 'a typed message' ? 'typed' : 'scenario'}`,
      testInfo,
    );
  });
}

test('show_product committed but its result never reached the server: after a reload the page sends that result, and does not run the call again', async ({
  page,
  playground,
}) => {
  test.setTimeout(60_000);
  await playground.open('');
  // The page's answer is lost on its way (the server was away, say).
  await page.route('**/tool-results', (route) => route.abort('connectionrefused'));
  await playground.say('show me the mug');
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('spotlight')).toContainText('Enamel camp mug $12.50');
  await expect(moves(playground, 'executing')).toHaveCount(1);
  await expect(playground.chat).toHaveAttribute('data-busy', 'true');

  await page.unroute('**/tool-results');
  const results: Request[] = [];
  page.on('request', (request) => {
    if (request.url().includes('/tool-results')) results.push(request);
  });
  await page.reload();
  // The model gets its answer, from the record this tab kept.
  await playground.settled();
  await expect(playground.assistantTexts.last()).toHaveText('Here it is: the Enamel camp mug, $12.50.');
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await twoFrames(playground);
  await expect(moves(playground, 'executing')).toHaveCount(1);
  await expect(moves(playground, 'committed')).toHaveCount(1);
  await expect(page.getByTestId('spotlight')).toContainText('Enamel camp mug $12.50');
  expect(results).toHaveLength(1);
  expect(results[0]?.postDataJSON()).toMatchObject({
    record: { status: 'committed', output: { sku: 'mug', shown: true } },
  });
});

test('Stop pressed while show_product’s result is on its way: the server hears the result first, so the call is committed for the model and after a reload, as the page showed it', async ({
  page,
  playground,
}) => {
  test.setTimeout(60_000);
  await playground.open('');
  // The page's answer is held on its way, as on a slow network, until after the press.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const order: string[] = [];
  await page.route('**/tool-results', async (route) => {
    await held;
    order.push('result');
    await route.continue();
  });
  page.on('request', (request) => {
    if (request.url().endsWith('/stop')) order.push('stop');
  });
  await playground.say('show me the mug');
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('spotlight')).toContainText('Enamel camp mug $12.50');
  await expect(playground.chat).toHaveAttribute('data-busy', 'true');

  await page.getByRole('button', { name: 'Stop' }).click();
  release();
  await playground.settled();
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');

  await page.unroute('**/tool-results');
  await page.reload();
  await playground.settled();
  // The server's transcript holds the page's answer, not a cancel it made up: the call ran here.
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('spotlight')).toContainText('Enamel camp mug $12.50');
  // Because the Stop waited for the answer on its way.
  expect(order).toEqual(['result', 'stop']);
});
