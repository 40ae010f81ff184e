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
        expect((await ledger.db.selectFrom('toolgate_events').select('at').orderBy('seq').execute()).map((row) => typeof row.at)).toEqual(['number', 'number']);
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
