import { sql } from 'kysely';
import { expect, it } from 'vitest';
import type { Ledger } from '../src/index.ts';
import { migrations } from '../src/ledger/migrations.ts';
import { appendMoves, callRow, T0 } from './support/events.ts';
import { describeLedgers } from './support/ledgers.ts';

async function applied(ledger: Ledger) {
  const { rows } = await sql<{
    name: string;
    timestamp: string;
  }>`select name, timestamp from toolgate_migrations order by name`.execute(ledger.db);
  return rows;
}

describeLedgers('migrations', (target) => {
  it('creates the ledger tables on open and records the migration that made them', async () => {
    const ledger = await (await target.fresh()).open();
    const tables = (await ledger.db.introspection.getTables()).map((table) => table.name);
    expect(tables).toEqual(
      expect.arrayContaining([
        'toolgate_calls',
        'toolgate_approvals',
        'toolgate_events',
        'toolgate_chain',
        'toolgate_budget_uses',
        'toolgate_budget_totals',
        'toolgate_approvers',
        'toolgate_turns',
        'toolgate_turn_calls',
        'toolgate_pending',
      ]),
    );
    expect((await applied(ledger)).map((row) => row.name)).toEqual(Object.keys(migrations).sort());
    expect(await ledger.verify()).toEqual({ ok: true, events: 0, hash: '0'.repeat(64) });
  });

  it('keeps an approval only for a stored call', async () => {
    const ledger = await (await target.fresh()).open();
    const approval = {
      call_id: 'call_1',
      session: 's1',
      input_hash: 'h',
      requested_at: T0,
      expires_at: T0 + 60_000,
      decision: null,
      approver: null,
      decided_at: null,
      consumed: 0,
    };
    await expect(
      ledger.transaction((trx) => trx.insertInto('toolgate_approvals').values(approval).execute()),
    ).rejects.toThrow(/FOREIGN KEY|foreign key/);
    await ledger.transaction(async (trx) => {
      await trx.insertInto('toolgate_calls').values(callRow('call_1')).execute();
      await trx.insertInto('toolgate_approvals').values(approval).execute();
    });
    expect(await ledger.db.selectFrom('toolgate_approvals').selectAll().execute()).toEqual([approval]);
  });

  it('reads bigint columns back as numbers', async () => {
    const ledger = await (await target.fresh()).open();
    await ledger.transaction(async (trx) => {
      await trx
        .insertInto('toolgate_calls')
        .values(callRow('call_1', { lease_expires_at: T0 + 30_000 }))
        .execute();
    });
    await appendMoves(ledger, 1);
    const call = await ledger.db
      .selectFrom('toolgate_calls')
      .select(['created_at', 'lease_expires_at', 'version', 'fence'])
      .executeTakeFirstOrThrow();
    expect(call).toEqual({ created_at: T0, lease_expires_at: T0 + 30_000, version: 1, fence: 0 });
    const event = await ledger.db
      .selectFrom('toolgate_events')
      .select(['seq', 'at'])
      .executeTakeFirstOrThrow();
    expect(event).toEqual({ seq: 1, at: T0 + 1 });
    const { count } = await ledger.db
      .selectFrom('toolgate_events')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    expect(count).toBe(1);
  });
});

describeLedgers(
  'migrations on a store opened again',
  (target) => {
    it('applies nothing the second time, and a second ledger object sees them applied', async () => {
      const store = await target.fresh();
      const first = await store.open();
      await appendMoves(first, 2);
      const before = await applied(first);
      const second = await store.open();
      expect(await applied(second)).toEqual(before);
      expect((await second.eventsAfter(0)).map((event) => event.seq)).toEqual([1, 2]);
      await first.close();
      const third = await store.open();
      expect(await applied(third)).toEqual(before);
      expect(await third.verify()).toMatchObject({ ok: true, events: 2 });
    });
  },
  { shared: true },
);

describeLedgers(
  'migrations when app servers start together',
  (target) => {
    it('applies them once however many ledgers open the database at the same time', async () => {
      const store = await target.fresh();
      const ledgers = await Promise.all([store.open(), store.open(), store.open(), store.open()]);
      expect((await applied(ledgers[0])).map((row) => row.name)).toEqual(Object.keys(migrations).sort());
      expect(await ledgers[3].db.selectFrom('toolgate_chain').selectAll().execute()).toEqual([
        { id: 1, last_seq: 0, last_hash: '0'.repeat(64), algorithm: null },
      ]);
    });
  },
  { dialects: ['postgres'] },
);
