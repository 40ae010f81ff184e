import { sql } from 'kysely';
import pg from 'pg';
import { expect, it } from 'vitest';
import { postgresLedger } from '../src/index.ts';
import { appendMoves } from './support/events.ts';
import { describeLedgers, keep } from './support/ledgers.ts';

describeLedgers(
  'a ledger on the app’s own pg.Pool',
  (target) => {
    it('borrows connections, leaves the pool’s own parsing alone, and leaves the pool open when closed', async () => {
      const store = await target.fresh();
      const pool = new pg.Pool({ connectionString: store.location, max: 3 });
      try {
        const ledger = keep(await postgresLedger({ pool }));
        await appendMoves(ledger, 2);
        expect(
          (await ledger.db.selectFrom('toolgate_events').select('at').orderBy('seq').execute()).map(
            (row) => typeof row.at,
          ),
        ).toEqual(['number', 'number']);
        const { rows } = await pool.query<{ at: unknown }>('select at from toolgate_events order by seq');
        expect(rows.map((row) => typeof row.at)).toEqual(['string', 'string']);
        await ledger.close();
        const after = await pool.query<{ count: string }>('select count(*) from toolgate_events');
        expect(after.rows).toEqual([{ count: '2' }]);
        expect(pool.totalCount).toBeLessThanOrEqual(3);
      } finally {
        await pool.end();
      }
    });

    it('prepares its own statements once per connection, not once per move, and leaves the app’s queries unprepared', async () => {
      const store = await target.fresh();
      // One connection listens for other servers' commits; every query runs on the other one.
      const pool = new pg.Pool({ connectionString: store.location, max: 2 });
      const ledger = keep(await postgresLedger({ pool }));
      try {
        const prepared = async () => {
          // On the pool's one query connection, so this reads the statements the ledger prepared on it.
          const { rows } = await sql<{
            name: string;
            statement: string;
          }>`select name, statement from pg_prepared_statements`.execute(ledger.db);
          return rows;
        };
        await appendMoves(ledger, 5);
        const afterFive = await prepared();
        await appendMoves(ledger, 50, 6);
        const afterFiftyFive = await prepared();
        expect(afterFive.length).toBeGreaterThan(0);
        expect(
          afterFive.every((row) => row.name.startsWith('toolgate_') && row.statement.includes('toolgate_')),
        ).toBe(true);
        // Fifty more moves add no statement: each shape was parsed once and is run again by name.
        expect(afterFiftyFive.map((row) => row.name).sort()).toEqual(afterFive.map((row) => row.name).sort());
        // The app's own query on the ledger's Kysely (no ledger table in it) is sent as it is.
        await sql`select 1 as one`.execute(ledger.db);
        expect((await prepared()).some((row) => row.statement.includes('select 1 as one'))).toBe(false);
      } finally {
        // The ledger holds its listening connection until closed; the pool ends only after.
        await ledger.close();
        await pool.end();
      }
    });

    it('hears another app server’s commits on the same pool through NOTIFY', async () => {
      const store = await target.fresh();
      const pool = new pg.Pool({ connectionString: store.location });
      try {
        const reader = keep(await postgresLedger({ pool, pollMs: 600_000 }));
        const writer = await store.open();
        const woke = new Promise<void>((resolve) => reader.onCommitted(() => resolve()));
        await appendMoves(writer, 1);
        await woke;
        expect(await reader.eventsAfter(0)).toHaveLength(1);
        await reader.close();
      } finally {
        await pool.end();
      }
    });
  },
  { dialects: ['postgres'] },
);
