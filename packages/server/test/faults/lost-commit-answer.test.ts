// PostgreSQL: a move that timed out behind a lock is reported as not saved. Its COMMIT is sent only
// after its statement answered, so the ledger holds nothing of it when the lock goes: what the gate
// reports is what the ledger holds. A COMMIT queued with the statement would run once the lock went,
// whatever the ledger had stopped waiting for, and ending its backend first does not prove it
// stopped: behind a pooler the client's pid is not a backend's, and with no connection to spare
// nothing can be ended. Each of those is a case below.
import { defineTool } from '@toolgate/core';
import pg from 'pg';
import { expect, it, onTestFinished, vi } from 'vitest';
import { createServerGate, postgresLedger } from '../../src/index.ts';
import { describeLedgers, keep } from '../support/ledgers.ts';

// The move waits this long behind the lock before it is given up on.
const QUERY_TIMEOUT_MS = 1000;
const session = { session: 's1', principal: 'alice' };
const inputSchema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } as const;

/** A connection of the test's own, beside the ledger's. */
async function connection(location: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  onTestFinished(() => client.end());
  return client;
}

/** Resolves once no other connection of this database is running a statement. */
async function quiet(client: pg.Client): Promise<void> {
  await vi.waitFor(
    async () => {
      const { rows } = await client.query<{ busy: number }>(
        "select count(*)::int as busy from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'",
      );
      expect(rows[0]?.busy).toBe(0);
    },
    { timeout: 5000, interval: 20 },
  );
}

const rowsOf = async (client: pg.Client) =>
  (await client.query<{ id: string; status: string }>('select id, status from toolgate_calls order by id'))
    .rows;

/** As behind PgBouncer in transaction mode: the key the client is given is the pooler's, not a backend's pid. */
class PooledClient extends pg.Client {
  get processID(): number {
    return 1_999_999_999;
  }
  set processID(_: unknown) {}
}

let refusing = false;
/** A server with no connection to spare once `refusing`: the ledger's open connections go on. */
class FullClient extends pg.Client {}
FullClient.prototype.connect = function connect(this: pg.Client, callback?: (error: Error) => void) {
  if (!refusing) return pg.Client.prototype.connect.call(this, callback as never);
  const error = Object.assign(new Error('sorry, too many clients already'), { code: '53300' });
  if (callback === undefined) return Promise.reject(error);
  callback(error);
} as pg.Client['connect'];

describeLedgers(
  'a move whose statement got no answer in time',
  (target) => {
    const clients: [string, typeof pg.Client][] = [
      ['on a connection of its own', pg.Client],
      ['behind a pooler, whose pid is not a backend', PooledClient],
      ['with no connection to spare', FullClient],
    ];
    for (const [where, Client] of clients)
      it(`is reported as not saved when it timed out behind a lock, and is not committed when the lock goes, ${where}`, async () => {
        refusing = false;
        onTestFinished(() => {
          refusing = false;
        });
        const store = await target.fresh();
        // One connection for the ledger's statements (the other listens): each move goes through it.
        const pool = new pg.Pool({ connectionString: store.location, max: 2, Client });
        onTestFinished(() => pool.end());
        const ledger = keep(
          await postgresLedger({ pool, queryTimeoutMs: QUERY_TIMEOUT_MS, onError: () => undefined }),
        );
        let runs = 0;
        const charge = defineTool({ name: 'charge', inputSchema, execute: () => ({ charged: (runs += 1) }) });
        const gate = createServerGate({ tools: [charge], ledger, recover: false, onError: () => undefined });
        onTestFinished(() => gate.close());
        // A call before: the connection has its statements prepared.
        expect(await gate.run({ id: 'c0', name: 'charge', arguments: { n: 0 } }, session)).toMatchObject({
          status: 'committed',
        });
        const blocker = await connection(store.location);
        // Reads go on; a new call's row waits for the lock, past the query timeout.
        await blocker.query('begin');
        await blocker.query('lock table toolgate_calls in exclusive mode');
        refusing = true;
        await expect(
          gate.propose({ id: 'c1', name: 'charge', arguments: { n: 1 } }, session),
        ).rejects.toMatchObject({
          code: 'ledger_unavailable',
          message: expect.stringContaining('Nothing was saved'),
        });
        refusing = false;
        await blocker.query('rollback');
        await quiet(blocker);
        expect(await rowsOf(blocker)).toEqual([{ id: 'c0', status: 'committed' }]);
        expect(runs).toBe(1);
        expect((await ledger.eventsAfter(0)).filter((event) => event.callId === 'c1')).toEqual([]);
        expect(await ledger.verify()).toMatchObject({ ok: true });
        // The same id may be proposed again, and is applied once.
        expect(await gate.run({ id: 'c1', name: 'charge', arguments: { n: 1 } }, session)).toMatchObject({
          status: 'committed',
          output: { charged: 2 },
        });
        expect(await rowsOf(blocker)).toEqual([
          { id: 'c0', status: 'committed' },
          { id: 'c1', status: 'committed' },
        ]);
      }, 30_000);
  },
  { dialects: ['postgres'] },
);
