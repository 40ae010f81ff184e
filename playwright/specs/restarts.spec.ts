import { startPlayground, type PlaygroundProcess } from '../playground-server.ts';
import { expect, Playground, test } from '../playground.ts';

// Each test here starts, kills and restarts a playground server of its own (its PID, its ledger file).
let server: PlaygroundProcess | undefined;
test.afterEach(async () => {
  await server?.stop('SIGKILL');
  server = undefined;
});

const moves = (playground: Playground, from: string, to: string) =>
  playground.page
    .getByTestId('audit')
    .locator('li')
    .filter({ hasText: `${from} → ${to}` });

test('the server restarts while a transfer awaits approval: approved after the restart, it runs once and the model is answered', async ({
  page,
}, testInfo) => {
  test.setTimeout(60_000);
  server = await startPlayground();
  const playground = new Playground(page);
  await playground.open('?pace=instant', server.url);
  await playground.run('A transfer that needs approval', 'Send $25 to sam@example.com for the camping trip.');
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');

  await server.stop('SIGKILL');
  await server.start();

  // The page's mirror reconnects on its own, within 5 s of the server serving again (Approve is
  // disabled while it is away); the approval is the new process's to run.
  await expect(call.getByRole('button', { name: 'Approve' })).toBeEnabled({ timeout: 5_000 });
  await call.getByRole('button', { name: 'Approve' }).click();
  await expect(call).toHaveAttribute('data-status', 'committed', { timeout: 20_000 });
  await expect(page.getByTestId('wallet')).toHaveText('$75.00');
  await playground.expectChanges(1);
  // The new process went on with the conversation the old one left waiting.
  await expect(playground.assistantTexts.last()).toHaveText('Sent $25.00 to sam@example.com (tr_501).');
  await playground.settled();
  await expect(moves(playground, 'awaiting_approval', 'executing')).toHaveCount(1);
  expect(await playground.serverShop()).toMatchObject({
    balance_cents: 7500,
    transfers: [{ transfer_id: 'tr_501' }],
  });
  expect(await playground.pageShop()).toEqual(await playground.serverShop());
  await playground.screenshot('restart-approved', testInfo);
});

test('the server is killed while a transfer runs: after the restart the call is failed / interrupted, and it never ran again', async ({
  page,
}, testInfo) => {
  test.setTimeout(60_000);
  // The bank holds the transfer for 20 s: the kill lands while the tool runs.
  server = await startPlayground({ PLAYGROUND_TRANSFER_HOLD_MS: '20000', PLAYGROUND_LEASE_MS: '1500' });
  const playground = new Playground(page);
  await playground.open('?pace=instant', server.url);
  await playground.run('A transfer that needs approval', 'Send $25 to sam@example.com for the camping trip.');
  const call = playground.status(0);
  await call.getByRole('button', { name: 'Approve' }).click();
  await expect(call).toHaveAttribute('data-status', 'executing');

  await server.stop('SIGKILL');
  await server.start();

  await expect(call).toHaveAttribute('data-status', 'failed', { timeout: 20_000 });
  await expect(call).toHaveAttribute('data-reason', 'interrupted');
  await expect(call.locator('[data-toolgate="reason"]')).toContainText('it may or may not have taken effect');
  // The model is told the truth, not that nothing happened.
  await expect(playground.assistantTexts.last()).toHaveText(
    "I can't tell whether the transfer went through: the server stopped while the tool ran. Check the wallet before you try again.",
  );
  await playground.settled();
  await expect(moves(playground, 'awaiting_approval', 'executing')).toHaveCount(1);

  // The wallet did not change twice; here it did not change at all, on the server or in the page, reloaded or not.
  expect(await playground.serverShop()).toMatchObject({ balance_cents: 10_000, transfers: [] });
  await expect(page.getByTestId('wallet')).toHaveText('$100.00');
  await page.reload();
  await expect(playground.status(0)).toHaveAttribute('data-status', 'failed');
  await expect(playground.status(0)).toHaveAttribute('data-reason', 'interrupted');
  await expect(page.getByTestId('wallet')).toHaveText('$100.00');
  await expect(moves(playground, 'awaiting_approval', 'executing')).toHaveCount(1);
  await expect(moves(playground, 'executing', 'failed')).toHaveCount(1);
  expect(await playground.pageShop()).toEqual(await playground.serverShop());
  await playground.screenshot('killed-interrupted', testInfo);
});

test("the event feed is cut from the server's side mid-flood: the page reconnects, every call ends as it should, and its shop equals the server's", async ({
  page,
}, testInfo) => {
  test.setTimeout(90_000);
  server = await startPlayground();
  const playground = new Playground(page);
  await playground.open('?pace=instant', server.url);
  const hook = (method: 'GET' | 'POST', body?: unknown) =>
    page.evaluate(
      async ({ method, body }) =>
        (await (
          await fetch('/api/test/drop-feeds', {
            method,
            ...(body === undefined
              ? {}
              : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
          })
        ).json()) as { dropped: number },
      { method, body },
    );
  // The server cuts every open feed once 200 of the flood's 760 events are in the ledger.
  await hook('POST', { afterEvents: 200 });
  await playground.run(
    'A flood of 200 calls',
    'Stock the cart for the scout troop: 200 items, one call each.',
  );
  const summary = page.getByTestId('turn-summary');
  await playground.settled(60_000);
  await expect(summary).toHaveText('180 committed · 20 rejected');
  // The calls' feed and the chat's, at least, were cut while the flood ran.
  expect((await hook('GET')).dropped).toBeGreaterThanOrEqual(2);
  // Every move arrived once: four for each committed call, two for each rejected one.
  await expect(page.getByTestId('audit-count')).toHaveText(String(180 * 4 + 20 * 2));
  await playground.expectChanges(180);
  expect(await playground.pageShop()).toEqual(await playground.serverShop());
  await playground.screenshot('flood-reconnected', testInfo);
});

test('the page says when its server is away: killed, it says so within seconds, with when it was last heard from; restarted, it says live again', async ({
  page,
}, testInfo) => {
  test.setTimeout(60_000);
  server = await startPlayground();
  const playground = new Playground(page);
  await playground.open('', server.url);
  const status = page.getByTestId('server-status');
  const said = status.getByRole('status');
  await expect(said).toHaveText('Connected to the server');
  await expect(said).toHaveAttribute('aria-live', 'polite');

  await server.stop('SIGKILL');
  await expect(said).toHaveText(/^(Reconnecting to the server…|Server offline — retrying)$/, {
    timeout: 3_000,
  });
  await expect(status).toContainText(/\(last heard \d+ s ago\)/);
  // Still away after a few failed attempts: it says it is offline, and goes on trying.
  await expect(said).toHaveText('Server offline — retrying', { timeout: 10_000 });
  await playground.screenshot('server-offline', testInfo);

  await server.start();
  await expect(said).toHaveText('Connected to the server', { timeout: 5_000 });
  await expect(status).not.toContainText('last heard');
});
