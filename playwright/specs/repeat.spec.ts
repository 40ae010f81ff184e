import type { Page } from '@playwright/test';
import { expect, test, type Playground } from '../playground.ts';

/** How a scenario's calls end, as its card promises: `status` or `status:reason`, in call order. */
interface Promise_ {
  /** What the visitor does while it runs (press Approve, Cancel…), before the calls settle. */
  readonly act?: (playground: Playground, page: Page) => Promise<void>;
  /** Undefined for a turn too large for cards: its summary says how the calls ended. */
  readonly ends?: readonly string[];
  /** What else the card promises, checked once the exchange is over. */
  readonly then?: (playground: Playground, page: Page) => Promise<void>;
}

const approve = async (playground: Playground, index: number) => {
  const call = playground.status(index);
  await expect(call).toHaveAttribute('data-status', 'awaiting_approval');
  await call.getByRole('button', { name: 'Approve', exact: true }).click();
};

const PROMISES: Record<string, Promise_> = {
  'A valid purchase': { ends: ['committed'] },
  'Cents sent as "12.50"': { ends: ['rejected:invalid_arguments', 'committed'] },
  'An unknown tool': { ends: ['rejected:unknown_tool'] },
  'Cancelled by app policy': { ends: ['cancelled:tool_cancelled'] },
  'A slow tool you cancel': {
    act: async (playground) => {
      const call = playground.status(0);
      await expect(call).toHaveAttribute('data-status', 'executing');
      await call.getByRole('button', { name: 'Cancel', exact: true }).click();
    },
    ends: ['cancelled:user_cancelled'],
  },
  'A transfer that needs approval': {
    act: (playground) => approve(playground, 0),
    ends: ['committed'],
    then: async (_, page) => expect(page.getByTestId('wallet')).toHaveText('$75.00'),
  },
  'A wire that needs two approvers': {
    act: async (playground, page) => {
      await approve(playground, 0);
      await expect(playground.status(0).locator('[data-toolgate="approvals"]')).toHaveAttribute(
        'data-left',
        '1',
      );
      await page.getByTestId('manager-switch').check();
      await approve(playground, 0);
    },
    ends: ['committed'],
    then: async (_, page) => {
      await expect(page.getByTestId('wallet')).toHaveText('$60.00');
      await page.getByTestId('manager-switch').uncheck();
    },
  },
  'A large transfer your manager approves': {
    // The visitor may not approve it: the manager does, from the Approvals view.
    act: async (playground, page) => {
      await expect(playground.status(0)).toHaveAttribute('data-status', 'awaiting_approval');
      const approvals = page.getByTestId('approvals');
      await approvals.getByRole('radio', { name: 'the manager', exact: true }).check();
      const waiting = approvals.locator('[data-toolgate="call"]');
      await expect(waiting).toHaveCount(1);
      await waiting.getByRole('button', { name: 'Approve', exact: true }).click();
    },
    ends: ['committed'],
    then: async (_, page) => {
      await expect(page.getByTestId('wallet')).toHaveText('$20.00');
      await expect(page.getByTestId('approvals').locator('[data-toolgate="inbox-empty"]')).toBeVisible();
    },
  },
  'Transfers past the chat’s budget': {
    act: (playground) => approve(playground, 0),
    ends: ['committed', 'rejected:budget_exceeded'],
    then: async (_, page) => expect(page.getByTestId('wallet')).toHaveText('$55.00'),
  },
  'Three parallel calls, one invalid': { ends: ['committed', 'committed', 'rejected:invalid_arguments'] },
  'A tool that throws': { ends: ['failed:tool_error'] },
  'A tool that runs in your browser': {
    ends: ['committed'],
    then: async (_, page) => expect(page.getByTestId('spotlight')).toContainText('$'),
  },
  'A model stuck on bad arguments': {
    ends: ['rejected:invalid_arguments', 'rejected:invalid_arguments'],
    then: async (playground) =>
      expect(playground.transcript.locator('.notice[data-tone="guard"]')).toHaveCount(1),
  },
  'A payment whose answer was lost': {
    ends: ['committed'],
    // Settled on the provider's evidence, and charged once, however often it is picked.
    then: async (playground, page) => {
      await expect(playground.status(0).locator('[data-toolgate="evidence"]')).toBeVisible();
      await expect(page.getByTestId('provider-charge-count')).toHaveText('1 charge');
    },
  },
  'A payment nobody can confirm': {
    // Held for a person: they read the charge at the provider and settle it on the card.
    act: async (playground, page) => {
      const call = playground.status(0);
      await expect(call.getByRole('button', { name: 'It went through' })).toBeVisible();
      const id = await page.getByTestId('provider-charge').locator('code').textContent();
      await call
        .getByLabel('What the tool returned (JSON)')
        .fill(`{"charge": "${id}", "amount_cents": 1250, "currency": "USD"}`);
      await call.getByRole('button', { name: 'It went through' }).click();
    },
    ends: ['committed'],
    then: async (playground, page) => {
      await expect(playground.status(0).locator('[data-toolgate="evidence"]')).toHaveText('(settled by you)');
      await expect(page.getByTestId('provider-charge-count')).toHaveText('1 charge');
    },
  },
  'A flood of 200 calls': {
    then: async (_, page) => {
      const summary = page.getByTestId('turn-summary');
      await expect(summary).toHaveText('180 committed · 20 rejected', { timeout: 30_000 });
      // The summary is the ledger's, not the page's memory: a reload shows it again.
      await page.reload();
      await expect(summary).toHaveText('180 committed · 20 rejected');
    },
  },
};

test('every scenario does what its card says three times in a row, in one visitor, in the order the page lists them', async ({
  page,
  playground,
}) => {
  test.setTimeout(300_000);
  const titles = await page
    .getByRole('navigation', { name: 'Scenarios' })
    .getByRole('button')
    .allTextContents();
  // A scenario added to the page without a promise here fails this test, rather than going untried.
  expect(titles.toSorted()).toEqual(Object.keys(PROMISES).toSorted());
  for (const title of titles) {
    const promise = PROMISES[title] as Promise_;
    for (let round = 1; round <= 3; round++) {
      await test.step(`${title}, ${round} of 3`, async () => {
        const before = await playground.chat.getAttribute('data-chat-id');
        await playground.scenario(title).click();
        // Each pick starts a fresh chat with its prompt.
        await expect(playground.chat).not.toHaveAttribute('data-chat-id', before ?? '');
        await expect(playground.transcript.locator('[data-role="user"]')).toHaveCount(1);
        if (promise.act !== undefined) await promise.act(playground, page);
        await playground.settled(30_000);
        const ends =
          promise.ends === undefined
            ? undefined
            : await playground.calls.evaluateAll((cards) =>
                cards.map((card) => {
                  const status = card.querySelector('[data-toolgate="call"]');
                  const reason = status?.getAttribute('data-reason');
                  return `${status?.getAttribute('data-status') ?? '?'}${reason ? `:${reason}` : ''}`;
                }),
              );
        expect(ends).toEqual(promise.ends);
        await promise.then?.(playground, page);
      });
    }
  }
});
