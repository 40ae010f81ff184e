// PostgreSQL: a move that writes nothing after its row sends its COMMIT with its statement. Once
// sent, PostgreSQL runs that COMMIT even if the ledger stops waiting for the answer: a move that
// timed out behind a lock commits when the lock goes. What the gate reports must be what the
// ledger holds, whichever way it went.
import { defineTool } from '@toolgate/core';
import pg from 'pg';
import { expect, it, onTestFinished, vi } from 'vitest';
import { createServerGate, postgresLedger } from '../../src/index.ts';
import { describeLedgers, keep } from '../support/ledgers.ts';

// Long enough for PostgreSQL to end a backend in on a busy machine; the first test waits it out once.
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

// pg reports a query not answered within query_timeout with these words.
const lostAnswer = () => new Error('Query read timeout');

type Kind = 'insert' | 'update';

/**
 * A pg client whose next COMMIT after a call's row is inserted (or updated) loses its answer once
 * PostgreSQL has given it: the commit happened, and the ledger hears a timeout, as when the answer
 * is slower than the query timeout.
 */
function losingClient(): { Client: typeof pg.Client; lose: (kind: Kind) => void; lost: () => number } {
  let armed: Kind | undefined;
  let lost = 0;
  class LosingClient extends pg.Client {
    // The statement whose COMMIT is sent next on its own (one the connection had not prepared yet).
    before: Kind | undefined = undefined;

    override query(...args: unknown[]): never {
      const [config] = args as [{ text?: unknown; callback?: unknown } | undefined];
      const text = typeof config?.text === 'string' ? config.text : '';
      const sent = () => super.query(...(args as [string])) as never;
      const kind: Kind | undefined = !text.includes('then commit')
        ? undefined
        : text.includes('insert into "toolgate_calls"')
          ? 'insert'
          : 'update';
      // The COMMIT sent in the same batch as its statement, or on its own right after it.
      const batched = typeof config?.callback === 'function' && kind !== undefined;
      const commitOf = batched ? kind : text === 'commit' ? this.before : undefined;
      this.before = batched ? undefined : kind;
      if (armed === undefined || commitOf !== armed) return sent();
      armed = undefined;
      lost += 1;
      if (!batched) return (sent() as Promise<unknown>).then(() => Promise.reject(lostAnswer())) as never;
      const answer = config?.callback as (error: Error | null) => void;
      (config as { callback: unknown }).callback = (error: Error | null) => answer(error ?? lostAnswer());
      return sent();
    }
  }
  return { Client: LosingClient, lose: (kind) => void (armed = kind), lost: () => lost };
}

describeLedgers(
  'a move whose COMMIT went with its statement, and whose answer never came',
  (target) => {
    it('is reported as not saved when it timed out behind a lock, and is not committed when the lock goes', async () => {
      const store = await target.fresh();
      // One connection for the ledger's statements (the other listens): each move goes through it.
      const pool = new pg.Pool({ connectionString: store.location, max: 2 });
      onTestFinished(() => pool.end());
      const ledger = keep(
        await postgresLedger({ pool, queryTimeoutMs: QUERY_TIMEOUT_MS, onError: () => undefined }),
      );
      let runs = 0;
      const charge = defineTool({ name: 'charge', inputSchema, execute: () => ({ charged: (runs += 1) }) });
      const gate = createServerGate({ tools: [charge], ledger, recover: false, onError: () => undefined });
      onTestFinished(() => gate.close());
      // A call before: the connection has its statements prepared, and sends a move in one batch.
      expect(await gate.run({ id: 'c0', name: 'charge', arguments: { n: 0 } }, session)).toMatchObject({
        status: 'committed',
      });
      const blocker = await connection(store.location);
      // Reads go on; a new call's row waits for the lock, past the query timeout.
      await blocker.query('begin');
      await blocker.query('lock table toolgate_calls in exclusive mode');
      await expect(
        gate.propose({ id: 'c1', name: 'charge', arguments: { n: 1 } }, session),
      ).rejects.toMatchObject({
        code: 'ledger_unavailable',
        message: expect.stringContaining('Nothing was saved'),
      });
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

    it('goes on as written when it did commit: the call is claimed and run, then committed, once', async () => {
      const store = await target.fresh();
      const losing = losingClient();
      const pool = new pg.Pool({ connectionString: store.location, Client: losing.Client });
      onTestFinished(() => pool.end());
      const ledger = keep(
        await postgresLedger({ pool, queryTimeoutMs: QUERY_TIMEOUT_MS, onError: () => undefined }),
      );
      let runs = 0;
      const charge = defineTool({ name: 'charge', inputSchema, execute: () => ({ charged: (runs += 1) }) });
      const gate = createServerGate({ tools: [charge], ledger, recover: false, onError: () => undefined });
      onTestFinished(() => gate.close());
      losing.lose('insert'); // the first write of the call: its row, executing, claimed by this process
      expect(await gate.run({ id: 'c1', name: 'charge', arguments: { n: 1 } }, session)).toMatchObject({
        status: 'committed',
        output: { charged: 1 },
      });
      expect(losing.lost()).toBe(1);
      // The end of a run. A move goes in one batch only while the ledger knows the chain's head,
      // which a busy sequencer may keep from it for a move or two.
      losing.lose('update');
      let calls = 1;
      while (losing.lost() < 2 && calls < 10) {
        calls += 1;
        expect(
          await gate.run({ id: `c${calls}`, name: 'charge', arguments: { n: calls } }, session),
        ).toMatchObject({ status: 'committed', output: { charged: calls } });
      }
      expect(losing.lost()).toBe(2);
      expect(runs).toBe(calls);
      const reader = await connection(store.location);
      expect(await rowsOf(reader)).toEqual(
        Array.from({ length: calls }, (_, n) => ({ id: `c${n + 1}`, status: 'committed' })),
      );
      expect(await ledger.verify()).toMatchObject({ ok: true });
    }, 30_000);
  },
  { dialects: ['postgres'] },
);
