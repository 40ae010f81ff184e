import { defineTool } from '@toolgate/core';
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { expect, it } from 'vitest';
import { createServerGate, type Ledger } from '../../src/index.ts';
import { chainHasher, GENESIS_HASH } from '../../src/ledger/chain/chain.ts';
import { chainRows } from '../../src/ledger/chain/chain-rows.ts';
import { migrations } from '../../src/ledger/migrations.ts';
import type { LedgerDatabase } from '../../src/schema.ts';
import { callRow, move } from '../support/events.ts';
import { describeLedgers, type Store, type Target } from '../support/ledgers.ts';

/** The migrations a ledger had before the one that made its writes lighter. */
const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0010'));

/** Makes `store` a ledger of the earlier migrations, with three calls of two chained moves each. */
async function earlierLedger(target: Target, store: Store) {
  const db = new Kysely<LedgerDatabase>({
    dialect:
      target.dialect === 'postgres'
        ? new PostgresDialect({ pool: new pg.Pool({ connectionString: store.location, max: 1 }) })
        : new SqliteDialect({ database: new Database(store.location) }),
  });
  try {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(before) },
      migrationTableName: 'toolgate_migrations',
      migrationLockTableName: 'toolgate_migration_lock',
    });
    const { error } = await migrator.migrateToLatest();
    if (error !== undefined) throw error;
    const calls = [1, 2, 3].map((n) => callRow(`call_${n}`, { record: `{"id":"call_${n}","n":2}` }));
    const events = calls.flatMap((call, index) => [
      move(index * 2 + 1, { callId: call.id, record: `{"id":"${call.id}","n":1}` }),
      move(index * 2 + 2, { callId: call.id, from: 'pending', to: 'validated', record: call.record }),
    ]);
    const rows = chainRows({ seq: 0, hash: GENESIS_HASH }, events, chainHasher(undefined));
    const last = rows[rows.length - 1]!;
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('toolgate_calls').values(calls).execute();
      await trx.insertInto('toolgate_events').values(rows).execute();
      await trx
        .updateTable('toolgate_chain')
        .set({ last_seq: last.seq, last_hash: last.hash, algorithm: 'sha256' })
        .execute();
    });
    return { head: last.hash, events: rows };
  } finally {
    await db.destroy();
  }
}

/** The indexes of a table, as `name: definition`. */
async function indexes(ledger: Ledger, table: string): Promise<Record<string, string>> {
  const { rows } =
    ledger.dialect === 'postgres'
      ? await sql<{ name: string; definition: string }>`
          select indexname as name, indexdef as definition from pg_indexes
          where schemaname = current_schema() and tablename = ${table}`.execute(ledger.db)
      : await sql<{ name: string; definition: string | null }>`
          select name, sql as definition from sqlite_master where type = 'index' and tbl_name = ${table}`.execute(
          ledger.db,
        );
  return Object.fromEntries(rows.map((row) => [row.name, row.definition ?? '(made by the table)']));
}

const echo = defineTool({
  name: 'echo',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (input: { text: string }) => ({ said: input.text }),
});

describeLedgers(
  'a ledger written by the earlier migrations, opened again',
  (target) => {
    it('keeps every event, number and hash, and chains new moves after them', async () => {
      const store = await target.fresh();
      const earlier = await earlierLedger(target, store);
      const ledger = await store.open();

      expect(await ledger.verify()).toEqual({ ok: true, events: 6, hash: earlier.head });
      expect(await ledger.db.selectFrom('toolgate_events').selectAll().orderBy('seq').execute()).toEqual(
        earlier.events,
      );
      expect((await ledger.eventsAfter(2, { session: 's1' })).map((event) => event.seq)).toEqual([
        3, 4, 5, 6,
      ]);

      const gate = createServerGate({ tools: [echo], ledger, recover: false });
      const call = await gate.run(
        { id: 'call_after', name: 'echo', arguments: '{"text":"hi"}' },
        { session: 's1', principal: 'user_1' },
      );
      expect(call.status).toBe('committed');
      const after = await ledger.eventsAfter(6);
      expect(after.map((event) => [event.seq, event.callId, event.to])).toEqual([
        [7, 'call_after', 'pending'],
        [8, 'call_after', 'validated'],
        [9, 'call_after', 'executing'],
        [10, 'call_after', 'committed'],
      ]);
      expect(await ledger.verify()).toMatchObject({ ok: true, events: 10 });
      await gate.close();
    });

    it('writes each event and call into fewer indexes', async () => {
      const store = await target.fresh();
      await earlierLedger(target, store);
      const ledger = await store.open();

      const calls = await indexes(ledger, 'toolgate_calls');
      expect(Object.keys(calls)).not.toContain('toolgate_calls_session');
      expect(calls.toolgate_calls_lease).toMatch(/where \(?"?lease_expires_at"? is not null\)?/i);
      const events = Object.keys(await indexes(ledger, 'toolgate_events')).sort();
      if (target.dialect === 'sqlite') {
        // seq is the rowid: no index of its own.
        expect(events).toEqual(['toolgate_events_call', 'toolgate_events_session']);
        const { rows } = await sql<{ pk: number; type: string }>`
          select pk, type from pragma_table_info('toolgate_events') where name = 'seq'`.execute(ledger.db);
        expect(rows).toEqual([{ pk: 1, type: 'INTEGER' }]);
      } else {
        expect(events).toEqual(['toolgate_events_call', 'toolgate_events_pkey', 'toolgate_events_session']);
      }
    });
  },
  { shared: true },
);
