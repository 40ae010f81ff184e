import { expect, test } from '../playground.ts';

test('"send 20 dollars to alice@example.com" proposes 2,000 cents to that address, and approved, sends exactly that', async ({
  page,
  playground,
}, testInfo) => {
  await playground.say('send 20 dollars to alice@example.com');
  const call = playground.status(0);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(playground.calls.nth(0).getByLabel('Arguments')).toHaveText(
    '{"to":"alice@example.com","amount_cents":2000}',
  );
  await expect(playground.assistantTexts.first()).toHaveText(
    'Preparing a transfer of $20.00 to alice@example.com. You need to approve it.',
  );
  await playground.screenshot('typed-transfer', testInfo);

  await call.getByRole('button', { name: 'Approve' }).click();
  await playground.settled();
  await expect(call).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('wallet')).toHaveText('$80.00');
  await expect(playground.appState).toContainText('$20.00 to alice@example.com');
  await expect(playground.assistantTexts.last()).toHaveText('Sent $20.00 to alice@example.com (tr_501).');
  expect(await playground.pageShop()).toEqual(await playground.serverShop());
});

test('"add two mugs" proposes quantity 2, and the cart holds three', async ({ playground }) => {
  await playground.say('add two mugs');
  await playground.settled();
  await expect(playground.calls).toHaveCount(1);
  await expect(playground.calls.nth(0).getByLabel('Arguments')).toHaveText('{"sku":"mug","quantity":2}');
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await playground.expectChanges(1);
  await expect(playground.appState.getByRole('row', { name: /Enamel camp mug 3 \$37\.50/ })).toBeVisible();
  await expect(playground.assistantTexts.last()).toHaveText('Added 2 × Enamel camp mug.');
});

test('a value the visitor did not give is asked for, not made up', async ({ playground }) => {
  await playground.say('send money to alice@example.com');
  await playground.settled();
  await expect(playground.calls).toHaveCount(0);
  await expect(playground.assistantTexts.last()).toHaveText(
    'To send money I need an amount, for example "send $20 to alice@example.com".',
  );
  await playground.expectStateUnchanged();
});

test("a page tool runs in the browser's own gate beside the server's: its result goes back to the model, and the shop is untouched", async ({
  page,
  playground,
}, testInfo) => {
  await playground.run('A tool that runs in your browser', 'Show me the steel bottle.');
  await playground.settled();

  const card = playground.calls.nth(0);
  await expect(card).toHaveAttribute('data-runs', 'page');
  await expect(card).toContainText('runs in your browser');
  await expect(playground.status(0)).toHaveAttribute('data-status', 'committed');
  await expect(page.getByTestId('spotlight')).toContainText('Steel bottle $22.00');
  // The model read the page's result, sent back through the server.
  await expect(playground.assistantTexts.last()).toHaveText(
    'That is the Steel bottle, $22.00. It is on your screen now.',
  );
  // The shop's state is the server's; a page tool never touches it.
  await playground.expectStateUnchanged();
  await playground.screenshot('page-tool', testInfo);

  // A server tool in the same chat runs on the server, with its own badge.
  await playground.say('add a cap');
  await playground.settled();
  await expect(playground.calls.nth(1)).toHaveAttribute('data-runs', 'server');
  await expect(playground.calls.nth(1)).toContainText('runs on the server');
  await expect(playground.status(1)).toHaveAttribute('data-status', 'committed');
});

test.describe('values are proposed as typed, and the gate refuses what the shop does not allow, with its reason', () => {
  for (const [said, args, why] of [
    [
      'send -20 dollars to alice@example.com',
      '{"to":"alice@example.com","amount_cents":-2000}',
      'amount_cents must be >= 1 (got integer -2000)',
    ],
    [
      'send $20.505 to alice@example.com',
      '{"to":"alice@example.com","amount_cents":2050.5}',
      'amount_cents must be integer (got number 2050.5)',
    ],
    [
      'send $1,000,000 to alice@example.com',
      '{"to":"alice@example.com","amount_cents":100000000}',
      'amount_cents must be <= 50000 (got integer 100000000)',
    ],
    [
      'send 20 euros to alice@example.com',
      '{"to":"alice@example.com","amount_cents":2000,"currency":"EUR"}',
      'currency is not an allowed property',
    ],
  ] as const) {
    test(`"${said}" is refused, and nothing moves`, async ({ page, playground }) => {
      await playground.say(said);
      await playground.settled();
      await expect(playground.calls.nth(0).getByLabel('Arguments')).toHaveText(args);
      await expect(playground.status(0)).toHaveAttribute('data-status', 'rejected');
      await expect(playground.status(0)).toHaveAttribute('data-reason', 'invalid_arguments');
      await expect(playground.assistantTexts.last()).toHaveText(
        `The transfer did not go through: ${why}. Nothing was run.`,
      );
      await expect(page.getByTestId('wallet')).toHaveText('$100.00');
      await playground.expectStateUnchanged();
    });
  }

  for (const [said, quantity, why] of [
    ['add -3 mugs', '-3', 'quantity must be >= 1 (got integer -3)'],
    ['add 2.5 mugs', '2.5', 'quantity must be integer (got number 2.5)'],
    ['add 1000000 mugs', '1000000', 'quantity must be <= 10 (got integer 1000000)'],
  ] as const) {
    test(`"${said}" proposes quantity ${quantity}, which is refused, and the cart is unchanged`, async ({
      playground,
    }) => {
      await playground.say(said);
      await playground.settled();
      await expect(playground.calls.nth(0).getByLabel('Arguments')).toHaveText(
        `{"sku":"mug","quantity":${quantity}}`,
      );
      await expect(playground.status(0)).toHaveAttribute('data-status', 'rejected');
      await expect(playground.assistantTexts.last()).toHaveText(
        `Nothing was added. Refused: ${why}. Nothing was run.`,
      );
      await playground.expectStateUnchanged();
    });
  }
});
