import { sql } from 'kysely';
import pg from 'pg';
import { expect, it, onTestFinished } from 'vitest';
import {
  postgresLedger,
  type Ledger,
  type PostgresLedgerClient,
  type PostgresLedgerPool,
} from '../../src/index.ts';
import { chainHasher } from '../../src/ledger/chain/chain.ts';
import { describeLedgers } from '../support/ledgers.ts';

// A ledger much larger than a query may take to read whole: CALLS settled calls of four events
// each. Written with one statement per table (a test has no time to append them one by one), so
// only the last event is hashed properly; a checkpoint at the head vouches for the rest, and what
// `verify({ from })` still reads in full is every call row against its last event.
const CALLS = 20_000;
const EVENTS = CALLS * 4;
const QUERY_TIMEOUT_MS = 2000;

async function seed(ledger: Ledger) {
  const series =
    ledger.dialect === 'postgres'
      ? sql`select g as n from generate_series(1, ${sql.lit(EVENTS)}) as g`
      : sql`with recursive s(n) as (select 1 union all select n + 1 from s where n < ${sql.lit(EVENTS)}) select n from s`;
  // Event n belongs to call (n + 3) / 4; the fourth of each call carries the record its row holds.
  const call = sql`((n + 3) / 4)`;
  await sql`
    insert into toolgate_events (seq, call_id, session, from_status, to_status, actor, at, reason, record, prev_hash, hash)
    select n, 'call_' || ${call}, 's1', null, 'committed', 'user_1', n, null,
           case when n % 4 = 0 then '{"id":"call_' || ${call} || '"}' else null end, 'p', 'h'
    from (${series}) as series`.execute(ledger.db);
  await sql`
    insert into toolgate_calls (id, session, owner, tool, proposal_hash, status, version, fence, idempotency_key, record, created_at, updated_at)
    select 'call_' || n, 's1', 'user_1', 'charge', 'h', 'committed', 4, 1, 'key_' || n, '{"id":"call_' || n || '"}', n, n
    from (${series}) as series where n <= ${sql.lit(CALLS)}`.execute(ledger.db);
  const last = await ledger.db
    .selectFrom('toolgate_events')
    .selectAll()
    .where('seq', '=', EVENTS)
    .executeTakeFirstOrThrow();
  const hash = chainHasher(undefined).hash(last.prev_hash, last);
  await ledger.db.updateTable('toolgate_events').set({ hash }).where('seq', '=', EVENTS).execute();
  await ledger.db
    .updateTable('toolgate_chain')
    .set({ last_seq: EVENTS, last_hash: hash, algorithm: 'sha256' })
    .execute();
  return { events: EVENTS, hash };
}

/**
 * A pg pool whose clients time each query: the longest one a PostgreSQL ledger on it ran, in ms.
 */
function timedPool(connectionString: string): {
  pool: PostgresLedgerPool;
  longest: () => number;
  end: () => Promise<void>;
} {
  const pool = new pg.Pool({ connectionString });
  let longest = 0;
  return {
    pool: {
      async connect() {
        const client: PostgresLedgerClient = await (pool as PostgresLedgerPool).connect();
        const timedClient: PostgresLedgerClient = {
          async query(config) {
            const started = performance.now();
            try {
              return await client.query(config);
            } finally {
              longest = Math.max(longest, performance.now() - started);
            }
          },
          release: (destroy) => client.release(destroy),
          on: client.on.bind(client),
          removeListener: (event, listener) => client.removeListener(event, listener),
        };
        return timedClient;
      },
    },
    longest: () => longest,
    end: () => pool.end(),
  };
}

describeLedgers(
  'verify() on a ledger larger than one query may read',
  (target) => {
    it('checks every call row a page at a time: no query waits on the whole ledger, and a changed row is still named', async () => {
      const store = await target.fresh();
      const checkpoint = await seed(await store.open());
      const timed = target.dialect === 'postgres' ? timedPool(store.location) : undefined;
      // A PostgreSQL ledger fails any query PostgreSQL does not answer within queryTimeoutMs: a
      // verify() that read every call row in one query failed so on a large ledger.
      const ledger =
        timed === undefined
          ? await store.open()
          : await postgresLedger({ pool: timed.pool, queryTimeoutMs: QUERY_TIMEOUT_MS });
      onTestFinished(async () => {
        await ledger.close();
        await timed?.end();
      });
      const progress: { calls: number }[] = [];
      let ticks = 0;
      const ticker = setInterval(() => (ticks += 1), 1);
      const started = performance.now();
      let answer: Awaited<ReturnType<Ledger['verify']>>;
      try {
        answer = await ledger.verify({
          from: checkpoint,
          onProgress: ({ calls }) => progress.push({ calls }),
        });
      } finally {
        clearInterval(ticker);
      }
      const took = performance.now() - started;
      expect(answer).toEqual({ ok: true, ...checkpoint });
      const pages = CALLS / 500;
      // No query grows with the ledger: the longest is a small part of the whole walk (one query
      // that read every row would be nearly all of it, however fast the machine).
      if (timed !== undefined) expect(timed.longest()).toBeLessThan(took / (pages / 8));
      // SQLite's queries run on the event loop: it gets a turn between pages, so whatever else
      // the server does goes on meanwhile (a timer due every millisecond fires between most pages).
      if (target.dialect === 'sqlite') expect(ticks).toBeGreaterThanOrEqual(pages / 2);
      expect(progress.at(-1)).toEqual({ calls: CALLS });

      await ledger.db
        .updateTable('toolgate_calls')
        .set({ record: '{"id":"call_19999","output":"forged"}' })
        .where('id', '=', 'call_19999')
        .execute();
      await ledger.db
        .updateTable('toolgate_calls')
        .set({ record: '{"id":"call_7","output":"forged"}' })
        .where('id', '=', 'call_7')
        .execute();
      expect(await ledger.verify({ from: checkpoint })).toEqual({
        ok: false,
        seq: 28,
        why: 'call "call_7" was changed in toolgate_calls: its record is not the one its last event (28) holds',
      });
    });
  },
  { shared: true },
);
