// Two budget keys of one call are locked in one order, whatever order their rows lie in on disk:
// were they locked as a scan meets them, a call deciding the keys in the table's order and one
// deciding them sorted (an edit, the exact path) could each hold one and wait for the other. This
// holds the first key in sorted order and watches whether a call waiting for it took the second.
import { defineTool } from '@toolgate/core';
import pg from 'pg';
import { expect, it, vi } from 'vitest';
import { createServerGate, type Budget, type Ledger } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const DAY = 86_400_000;
const budgets: Budget[] = [
  {
    name: 'a_per_principal',
    per: 'principal',
    windowMs: DAY,
    max: 1_000_000,
    measure: (input) => (input as { amount_cents: number }).amount_cents,
  },
  {
    name: 'b_per_session',
    per: 'session',
    windowMs: DAY,
    max: 1_000_000,
    measure: (input) => (input as { amount_cents: number }).amount_cents,
  },
];
const transfer = defineTool({
  name: 'transfer',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 } },
    required: ['amount_cents'],
    additionalProperties: false,
  },
  execute: (input) => ({ sent: input.amount_cents }),
});

/**
 * Holds the first key (sorted) from a connection of its own while `act` runs, waits until `act`'s
 * transaction waits for it, and answers whether the second key was free meanwhile.
 */
async function secondKeyWhileWaiting(
  location: string,
  act: () => Promise<unknown>,
): Promise<{ second: string; acted: unknown }> {
  const other = new pg.Client({ connectionString: location });
  await other.connect();
  let acting: Promise<unknown> = Promise.resolve();
  try {
    await other.query('begin');
    await other.query(
      `select 1 from toolgate_budget_totals where budget = 'a_per_principal' and key = 'alice' for update`,
    );
    acting = act();
    await vi.waitFor(
      async () => {
        // Inside a transaction PostgreSQL answers pg_stat_activity from the snapshot it took at
        // the first look: without clearing it, a first look taken before `act` waited is the
        // answer for ever.
        await other.query('select pg_stat_clear_snapshot()');
        const { rows } = await other.query<{ waiting: string }>(
          `select count(*) as waiting from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`,
        );
        expect(Number(rows[0]?.waiting)).toBeGreaterThan(0);
      },
      { timeout: 10_000, interval: 20 },
    );
    const second = await other
      .query(
        `select 1 from toolgate_budget_totals where budget = 'b_per_session' and key = 'chat_1' for update nowait`,
      )
      .then(
        () => 'free',
        (error: { code?: string }) => `held (${error.code ?? 'unknown'})`,
      );
    await other.query('rollback');
    return { second, acted: await acting };
  } finally {
    // Whatever happened, the transaction is let go of, so `act` ends before the gate closes.
    await other.query('rollback').catch(() => undefined);
    await acting.catch(() => undefined);
    await other.end();
  }
}

/** The totals rows made second key first, so a scan meets them in the opposite of the sorted order. */
async function totalsOnDiskBackwards(ledger: Ledger, amount = 0): Promise<void> {
  await ledger.db
    .insertInto('toolgate_budget_totals')
    .values([
      { budget: 'b_per_session', key: 'chat_1', amount, oldest: null },
      { budget: 'a_per_principal', key: 'alice', amount, oldest: null },
    ])
    .execute();
}

const totals = async (ledger: Ledger) =>
  (
    await ledger.db
      .selectFrom('toolgate_budget_totals')
      .select(['budget', 'key', 'amount'])
      .orderBy('budget')
      .execute()
  ).map((row) => ({ ...row, amount: Number(row.amount) }));

describeLedgers(
  'budget keys locked in one order',
  (target) => {
    it('a call being admitted, waiting for its first key (sorted), holds none after it, though the rows lie the other way round on disk', async () => {
      const store = await target.fresh();
      const ledger = await store.open();
      const gate = createServerGate({ tools: [transfer], ledger, recover: false, budgets });
      await totalsOnDiskBackwards(ledger);
      const { second, acted } = await secondKeyWhileWaiting(store.location, () =>
        gate.run(
          { id: 'c1', name: 'transfer', arguments: { amount_cents: 500 } },
          { session: 'chat_1', principal: 'alice' },
        ),
      );
      expect(second).toBe('free');
      expect(acted).toMatchObject({ status: 'committed' });
      expect(await totals(ledger)).toEqual([
        { budget: 'a_per_principal', key: 'alice', amount: 500 },
        { budget: 'b_per_session', key: 'chat_1', amount: 500 },
      ]);
      await gate.close();
    });

    it('a denied call giving its shares back, waiting for its first key (sorted), holds none after it', async () => {
      const store = await target.fresh();
      const ledger = await store.open();
      const gate = createServerGate({
        tools: [{ ...transfer, needsApproval: true }],
        ledger,
        recover: false,
        budgets,
      });
      await totalsOnDiskBackwards(ledger);
      const waiting = await gate.propose(
        { id: 'c1', name: 'transfer', arguments: { amount_cents: 500 } },
        { session: 'chat_1', principal: 'alice' },
      );
      expect(waiting.status).toBe('awaiting_approval');
      const { second, acted } = await secondKeyWhileWaiting(store.location, () =>
        gate.deny('c1', { principal: 'alice' }),
      );
      expect(second).toBe('free');
      expect(acted).toEqual({ ok: true });
      expect(await totals(ledger)).toEqual([
        { budget: 'a_per_principal', key: 'alice', amount: 0 },
        { budget: 'b_per_session', key: 'chat_1', amount: 0 },
      ]);
      await gate.close();
    });
  },
  { dialects: ['postgres'] },
);
