import { defineTool, inputHash } from '@toolgate/core';
import Database from 'better-sqlite3';
import { expect, it, onTestFinished, vi } from 'vitest';
import { createServerGate, LedgerError, sqliteLedger, type Ledger } from '../../src/index.ts';
import { describeLedgers, keep, postgresAdmin, withAdmin, type Target } from '../support/ledgers.ts';

/** A ledger, and a way to make its database unusable for a while. */
interface Outage {
  readonly ledger: Ledger;
  /** SQLite: another connection takes the write lock and keeps it past the busy timeout. PostgreSQL: the database refuses connections, and those it had are ended. */
  readonly begin: () => Promise<void>;
  readonly end: () => Promise<void>;
}

/** The outage ends with the test, whatever happens in it. */
async function outage(target: Target): Promise<Outage> {
  const store = await target.fresh();
  let ending: Promise<void> | undefined;
  const once = (end: () => Promise<void>) => () => (ending ??= end());
  if (target.dialect === 'sqlite') {
    const ledger = keep(
      await sqliteLedger({ path: store.location, busyTimeoutMs: 20, onError: () => undefined }),
    );
    const other = new Database(store.location);
    const end = once(async () => {
      if (other.inTransaction) other.exec('rollback');
      other.close();
    });
    onTestFinished(end);
    return { ledger, begin: async () => void other.exec('begin immediate'), end };
  }
  const ledger = await store.open({ onError: () => undefined });
  const database = new URL(store.location).pathname.slice(1);
  const end = once(() =>
    withAdmin(
      postgresAdmin!,
      async (admin) => void (await admin.query(`alter database ${database} allow_connections true`)),
    ),
  );
  onTestFinished(end);
  return {
    ledger,
    begin: () =>
      withAdmin(postgresAdmin!, async (admin) => {
        await admin.query(`alter database ${database} allow_connections false`);
        await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [
          database,
        ]);
      }),
    end,
  };
}

const inputSchema = {
  type: 'object',
  properties: { amount_cents: { type: 'integer' } },
  required: ['amount_cents'],
  additionalProperties: false,
} as const;
const session = { session: 's1', principal: 'alice' };

describeLedgers(
  'a database that cannot be used while a call is proposed or approved',
  (target) => {
    it('fails the propose with ledger_unavailable when the call is first written, keeps nothing of it, and runs it once when proposed again', async () => {
      const { ledger, begin, end } = await outage(target);
      const runs: number[] = [];
      let cut = true;
      const charge = defineTool({
        name: 'charge',
        inputSchema,
        // The database goes away after the call was read and checked, before its first write.
        async authorize() {
          if (cut) await begin();
          cut = false;
          return true;
        },
        execute: (input) => void runs.push(input.amount_cents),
      });
      const gate = createServerGate({ tools: [charge], ledger, recover: false, onError: vi.fn() });
      const proposal = { id: 'c1', name: 'charge', arguments: '{"amount_cents":100}' };
      const failing = gate.propose(proposal, session);
      await expect(failing).rejects.toBeInstanceOf(LedgerError);
      await expect(failing).rejects.toMatchObject({
        code: 'ledger_unavailable',
        message: expect.stringContaining('try again with the same call id'),
      });
      await end();
      expect(await gate.get('c1')).toBeUndefined();
      expect((await ledger.eventsAfter(0)).filter((event) => event.callId === 'c1')).toEqual([]);
      expect(runs).toEqual([]);
      expect(await gate.run(proposal, session)).toMatchObject({ id: 'c1', status: 'committed' });
      expect(await gate.run(proposal, session)).toMatchObject({ id: 'c1', status: 'committed' });
      expect(runs).toEqual([100]);
      await gate.close();
    });

    it('fails a propose made while the database is out with ledger_unavailable, and runs the call once when proposed again after', async () => {
      const { ledger, begin, end } = await outage(target);
      const runs: number[] = [];
      const charge = defineTool({
        name: 'charge',
        inputSchema,
        execute: (input) => void runs.push(input.amount_cents),
      });
      const gate = createServerGate({ tools: [charge], ledger, recover: false, onError: vi.fn() });
      const proposal = { id: 'c1', name: 'charge', arguments: '{"amount_cents":100}' };
      await begin();
      const failing = gate.propose(proposal, session);
      await expect(failing).rejects.toBeInstanceOf(LedgerError);
      await expect(failing).rejects.toMatchObject({ code: 'ledger_unavailable' });
      await end();
      expect(await gate.get('c1')).toBeUndefined();
      expect(await gate.run(proposal, session)).toMatchObject({ id: 'c1', status: 'committed' });
      expect(runs).toEqual([100]);
      await gate.close();
    });

    it('fails an approval with ledger_unavailable, leaves the call waiting with its approval undecided, and runs it once when approved again', async () => {
      const { ledger, begin, end } = await outage(target);
      const runs: number[] = [];
      const charge = defineTool({
        name: 'charge',
        inputSchema,
        needsApproval: true,
        execute: (input) => void runs.push(input.amount_cents),
      });
      const gate = createServerGate({ tools: [charge], ledger, recover: false, onError: vi.fn() });
      const call = await gate.propose(
        { id: 'c1', name: 'charge', arguments: '{"amount_cents":100}' },
        session,
      );
      expect(call.status).toBe('awaiting_approval');
      const approval = { principal: 'alice', inputHash: await inputHash(call.input) };
      await begin();
      const failing = gate.approve('c1', approval);
      await expect(failing).rejects.toBeInstanceOf(LedgerError);
      await expect(failing).rejects.toMatchObject({ code: 'ledger_unavailable' });
      await end();
      expect(await gate.get('c1')).toMatchObject({ status: 'awaiting_approval' });
      expect(
        await ledger.db
          .selectFrom('toolgate_approvals')
          .select(['decision', 'consumed'])
          .where('call_id', '=', 'c1')
          .execute(),
      ).toEqual([{ decision: null, consumed: 0 }]);
      expect(runs).toEqual([]);
      expect(await gate.approve('c1', approval)).toEqual({ ok: true });
      expect(await gate.settled('c1')).toMatchObject({ status: 'committed' });
      expect(await gate.approve('c1', approval)).toMatchObject({ ok: false, code: 'settled' });
      expect(runs).toEqual([100]);
      await gate.close();
    });
  },
  { shared: true },
);
