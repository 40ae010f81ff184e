import { expect, it, vi } from 'vitest';
import type { Ledger } from '../src/index.ts';
import { appendMoves } from './support/events.ts';
import { describeLedgers, withAdmin } from './support/ledgers.ts';

/** Resolves at the listener's next wake-up. */
function nextWake(ledger: Ledger): Promise<void> {
  return new Promise((resolve) => {
    const stop = ledger.onCommitted(() => {
      stop();
      resolve();
    });
  });
}

describeLedgers('onCommitted', (target) => {
  it('wakes listeners after this ledger commits an event', async () => {
    const ledger = await (await target.fresh()).open();
    const woke = nextWake(ledger);
    await appendMoves(ledger, 1);
    await woke;
    expect((await ledger.eventsAfter(0)).map((event) => event.seq)).toEqual([1]);
  });

  it('keeps waking the other listeners when one throws', async () => {
    const onError = vi.fn();
    const ledger = await (await target.fresh()).open({ onError });
    const failure = new Error('listener broke');
    const stop = ledger.onCommitted(() => {
      throw failure;
    });
    const woke = nextWake(ledger);
    await appendMoves(ledger, 1);
    await woke;
    stop();
    expect(onError).toHaveBeenCalledWith(failure);
  });
});

describeLedgers(
  'onCommitted across ledger objects',
  (target) => {
    it('wakes for commits made through another ledger object on the same store', async () => {
      const store = await target.fresh();
      // A poll far slower than the test's timeout: on PostgreSQL only NOTIFY can wake it in time.
      const reader = await store.open({ pollMs: target.dialect === 'postgres' ? 600_000 : 10 });
      const writer = await store.open();
      const woke = nextWake(reader);
      await appendMoves(writer, 2);
      await woke;
      expect((await reader.eventsAfter(0)).map((event) => event.callId)).toEqual(['call_1', 'call_2']);
    });
  },
  { shared: true },
);

describeLedgers(
  'the PostgreSQL live feed',
  (target) => {
    it('listens again after its connection is cut, and wakes listeners for what they may have missed', async () => {
      const store = await target.fresh();
      const onError = vi.fn();
      const reader = await store.open({ pollMs: 600_000, onError });
      const writer = await store.open({ onError: () => undefined });
      const reconnected = nextWake(reader);
      const database = new URL(store.location).pathname.slice(1);
      const { rowCount } = await withAdmin(store.location, (admin) =>
        admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and query ilike 'listen%'`,
          [database],
        ),
      );
      expect(rowCount).toBe(2);
      await reconnected;
      expect(onError).toHaveBeenCalledWith(
        expect.objectContaining({
          message: expect.stringContaining('terminating connection due to administrator command'),
        }),
      );
      const woke = nextWake(reader);
      await appendMoves(writer, 1);
      await woke;
      expect(await reader.eventsAfter(0)).toHaveLength(1);
    });
  },
  { dialects: ['postgres'] },
);
