// While the chain head is held (a slow commit, a long pass of the sequencer, another app server),
// appends that wait for it must not take every connection of the pool: reads of calls and sessions
// go on. Two things see to it, each tested here on its own: moves never wait for the head (the
// sequencer chains their events after they commit), and writers that do wait for it (a sequencer
// pass, an appendEvent) are at most half the pool.
import { setTimeout as delay } from 'node:timers/promises';
import { defineTool } from '@toolgate/core';
import { afterEach, expect, it, vi } from 'vitest';
import { createServerGate, type Ledger } from '../../src/index.ts';
import { move } from '../support/events.ts';
import { describeLedgers, withAdmin } from '../support/ledgers.ts';

// The advisory lock whoever extends the chain holds ('toolga'); the tests check it is the one.
const CHAIN_LOCK = 0x746f6f6c6761;
/** A read that waited for the chain would take about as long as the test holds it (seconds). */
const QUICK_MS = 500;

let releases: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const release of releases) await release();
  releases = [];
});

/**
 * Holds the chain's lock from a connection of its own, as a transaction that chains would, until
 * released (or for 3 s, so that a read starved of connections ends, late, rather than never).
 */
async function holdChain(location: string): Promise<() => Promise<void>> {
  let let_go!: () => void;
  const released = new Promise<void>((resolve) => (let_go = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const done = withAdmin(location, async (client) => {
    await client.query('select pg_advisory_lock($1)', [CHAIN_LOCK]);
    held();
    await released;
    await client.query('select pg_advisory_unlock($1)', [CHAIN_LOCK]);
  });
  await holding;
  const timer = setTimeout(() => let_go(), 3000);
  const release = async () => {
    clearTimeout(timer);
    let_go();
    await done;
  };
  releases.push(release);
  return release;
}

/** How many of this database's connections wait for an advisory lock now. */
async function waitingForChain(location: string): Promise<number> {
  const database = new URL(location).pathname.slice(1);
  return withAdmin(location, async (client) => {
    const { rows } = await client.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and wait_event = 'advisory'",
      [database],
    );
    return rows[0]?.n ?? 0;
  });
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

const readCalls = (ledger: Ledger) =>
  ledger.read((db) => db.selectFrom('toolgate_calls').select('id').execute());

describeLedgers(
  'the chain head held while many append',
  (target) => {
    it('leaves connections for reads when twenty appendEvent transactions wait for it (a pool of 10)', async () => {
      const store = await target.fresh();
      const ledger = await store.open();
      await ledger.transaction((trx) => ledger.appendEvent(trx, move(1)));
      const release = await holdChain(store.location);
      let appended = 0;
      const appends = Array.from({ length: 20 }, (_, index) =>
        ledger.transaction((trx) => ledger.appendEvent(trx, move(index + 2))).then(() => (appended += 1)),
      );
      await delay(300); // every append has taken what it can and waits
      expect(await waitingForChain(store.location)).toBeGreaterThan(0);
      const { ms } = await timed(() => readCalls(ledger));
      expect(appended).toBe(0); // they did wait for the chain: the read did not pass for lack of waiting
      expect(ms).toBeLessThan(QUICK_MS);
      await release();
      await Promise.all(appends);
      expect(await ledger.verify()).toMatchObject({ ok: true, events: 21 });
    });

    it('lets twenty calls commit and settle while the head is held, none of them holding a connection, and answers get() at once', async () => {
      const store = await target.fresh();
      const ledger = await store.open();
      const work = defineTool({
        name: 'work',
        inputSchema: { type: 'object' },
        execute: () => ({ ok: true }),
      });
      const gate = createServerGate({ tools: [work], ledger, recover: false });
      // The chain's first event, so that the head is known and a move would chain in place if it could.
      await gate.run({ id: 'first', name: 'work', arguments: {} }, { session: 's0', principal: 'alice' });
      const release = await holdChain(store.location);
      // Each move commits with its event left pending and returns: the calls settle while the head
      // is held, and only the sequencer's one pass waits for it.
      const settled = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          gate.run(
            { id: `c${index}`, name: 'work', arguments: {} },
            { session: `s${index}`, principal: 'alice' },
          ),
        ),
      );
      expect(settled.map((call) => call.status)).toEqual(Array(20).fill('committed'));
      await delay(200);
      expect(await waitingForChain(store.location)).toBe(1);
      const { value, ms } = await timed(() => gate.get('c7'));
      expect(value).toMatchObject({ id: 'c7', status: 'committed' });
      expect(ms).toBeLessThan(QUICK_MS);
      await release();
      // Once the head is free every pending event is chained: 4 moves for each of the 21 calls.
      await vi.waitFor(async () => expect(await ledger.verify()).toMatchObject({ ok: true, events: 84 }), {
        timeout: 5000,
      });
      await gate.close();
    });
  },
  { dialects: ['postgres'] },
);
