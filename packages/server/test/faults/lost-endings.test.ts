// A tool's result that cannot be written when it returns (the database is cut off, locked or
// refusing connections) is written once the database is back, if that is within the ending
// retry's bound; past it the process lets the call go and recovery settles it by its tool's
// kind. Either way `settled()` resolves and no call stays `executing`.
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { defineTool } from '@toolgate/core';
import { afterEach, expect, it, onTestFinished } from 'vitest';
import { createServerGate, postgresLedger, sqliteLedger, type Ledger } from '../../src/index.ts';
import { describeLedgers, keep, type Target } from '../support/ledgers.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';

interface Outage {
  readonly ledger: Ledger;
  /** Makes the database unusable now, and usable again after `ms`. */
  readonly during: (ms: number) => void;
  /** Resolves once an outage has begun and is over. */
  readonly over: () => Promise<void>;
}

let ends: Promise<void>[] = [];
afterEach(async () => {
  await Promise.all(ends);
  ends = [];
});

async function outage(target: Target): Promise<Outage> {
  const store = await target.fresh();
  let overNow!: () => void;
  const ending = new Promise<void>((resolve) => (overNow = resolve));
  if (target.dialect === 'sqlite') {
    const ledger = keep(
      await sqliteLedger({ path: store.location, busyTimeoutMs: 20, onError: () => undefined }),
    );
    const other = new Database(store.location);
    onTestFinished(() => {
      if (other.inTransaction) other.exec('rollback');
      other.close();
    });
    return {
      ledger,
      during(ms) {
        other.exec('begin immediate');
        ends.push(
          delay(ms)
            .then(() => void other.exec('rollback'))
            .then(overNow),
        );
      },
      over: () => ending,
    };
  }
  await (await store.open()).close();
  const upstream = new URL(store.location);
  const proxy = await tcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
  onTestFinished(() => proxy.close());
  const ledger = keep(
    await postgresLedger({ connectionString: proxy.through(store.location), onError: () => undefined }),
  );
  return {
    ledger,
    during(ms) {
      // Every connection is cut, and new ones are refused, until the outage ends.
      void proxy.mode('refuse');
      ends.push(
        delay(ms)
          .then(() => proxy.mode('pass'))
          .then(overNow),
      );
    },
    over: () => ending,
  };
}

const inputSchema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } as const;
const session = { session: 's1', principal: 'alice' };

describeLedgers(
  'a result that cannot be written when its tool returns',
  (target) => {
    it('is written once the database is back within the bound: committed, run once, settled() resolves', async () => {
      const { ledger, during, over } = await outage(target);
      let runs = 0;
      const charge = defineTool({
        name: 'charge',
        inputSchema,
        execute: () => {
          runs += 1;
          during(2500); // the database goes away as the tool returns, for 2.5 s
          return { charged: true };
        },
      });
      const gate = createServerGate({
        tools: [charge],
        ledger,
        leaseMs: 2000,
        endingRetryMs: 8000,
        onError: () => undefined,
      });
      onTestFinished(() => gate.close());
      expect(await gate.propose({ id: 'c1', name: 'charge', arguments: { n: 1 } }, session)).toMatchObject({
        status: 'executing',
      });
      await over();
      expect(await gate.settled('c1')).toMatchObject({ status: 'committed', output: { charged: true } });
      expect(runs).toBe(1);
      expect(await gate.propose({ id: 'c1', name: 'charge', arguments: { n: 1 } }, session)).toMatchObject({
        status: 'committed',
      });
      expect(await ledger.db.selectFrom('toolgate_calls').select('status').execute()).toEqual([
        { status: 'committed' },
      ]);
    }, 30_000);

    it('past the bound is let go, and recovery ends it failed / interrupted (a tool that is not idempotent)', async () => {
      const { ledger, during, over } = await outage(target);
      let runs = 0;
      const charge = defineTool({
        name: 'charge',
        inputSchema,
        execute: () => {
          runs += 1;
          during(2500);
          return { charged: true };
        },
      });
      const gate = createServerGate({
        tools: [charge],
        ledger,
        leaseMs: 800,
        endingRetryMs: 300,
        onError: () => undefined,
      });
      onTestFinished(() => gate.close());
      await gate.propose({ id: 'c1', name: 'charge', arguments: { n: 1 } }, session).catch(() => undefined);
      await over();
      const settled = await gate.settled('c1');
      expect(settled).toMatchObject({ status: 'failed', reason: { code: 'interrupted' } });
      expect(runs).toBe(1);
      expect(await gate.propose({ id: 'c1', name: 'charge', arguments: { n: 1 } }, session)).toMatchObject({
        status: 'failed',
      });
      expect(await ledger.verify()).toMatchObject({ ok: true });
    }, 30_000);

    it('past the bound is let go, and recovery runs it again with the same idempotency key (an idempotent tool)', async () => {
      const { ledger, during, over } = await outage(target);
      const keys: string[] = [];
      const sync = defineTool({
        name: 'sync',
        inputSchema,
        idempotent: true,
        execute: (_input, { idempotencyKey }) => {
          keys.push(idempotencyKey);
          if (keys.length === 1) during(2500);
          return { synced: keys.length };
        },
      });
      const gate = createServerGate({
        tools: [sync],
        ledger,
        leaseMs: 800,
        endingRetryMs: 300,
        onError: () => undefined,
      });
      onTestFinished(() => gate.close());
      await gate.propose({ id: 'c1', name: 'sync', arguments: { n: 1 } }, session).catch(() => undefined);
      await over();
      expect(await gate.settled('c1')).toMatchObject({ status: 'committed', output: { synced: 2 } });
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0]);
    }, 30_000);
  },
  { shared: true },
);
