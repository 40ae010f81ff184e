// A network that stops answering without closing anything (a firewall dropping packets, a host
// gone mid-conversation): no call of the ledger may wait for PostgreSQL for ever. A query that is
// not answered within queryTimeoutMs fails with a LedgerError, its connection is dropped, and the
// ending retry (or, past its bound, recovery) settles the call once the network answers again.
import { setTimeout as delay } from 'node:timers/promises';
import { defineTool } from '@toolgate/core';
import { afterEach, expect, it, onTestFinished } from 'vitest';
import { createServerGate, postgresLedger, type ServerGate } from '../../src/index.ts';
import { describeLedgers, keep, type Target } from '../support/ledgers.ts';
import { againWhileUnavailable } from '../support/again.ts';
import { tcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const QUERY_TIMEOUT_MS = 400;

let ends: Promise<unknown>[] = [];
afterEach(async () => {
  await Promise.all(ends);
  ends = [];
});

async function throughProxy(target: Target): Promise<{ proxy: TcpProxy; connectionString: string }> {
  const store = await target.fresh();
  await (await store.open()).close();
  const upstream = new URL(store.location);
  const proxy = await tcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
  onTestFinished(() => proxy.close());
  return { proxy, connectionString: proxy.through(store.location) };
}

/** The proxy goes silent for `ms`, then passes bytes again. */
function blackhole(proxy: TcpProxy, ms: number): void {
  void proxy.mode('blackhole');
  ends.push(delay(ms).then(() => proxy.mode('pass')));
}

/**
 * `settled()`, asked again while it answers LedgerError: connections that went silent with the
 * network stay silent after it answers again, and each one fails the read it is used for, once.
 */
const settledOnceReachable = (gate: ServerGate, id: string): Promise<unknown> =>
  againWhileUnavailable(() => gate.settled(id), { tries: 20 });

const inputSchema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } as const;
const session = { session: 's1', principal: 'alice' };

describeLedgers(
  'a PostgreSQL connection that stops answering',
  (target) => {
    it('fails a read with ledger_unavailable within the query timeout, and reads again once the network answers', async () => {
      const { proxy, connectionString } = await throughProxy(target);
      const ledger = keep(
        await postgresLedger({
          connectionString,
          queryTimeoutMs: QUERY_TIMEOUT_MS,
          onError: () => undefined,
        }),
      );
      expect(await ledger.head()).toBe(0);
      blackhole(proxy, 1500);
      const started = performance.now();
      await expect(
        ledger.read((db) => db.selectFrom('toolgate_calls').selectAll().execute()),
      ).rejects.toMatchObject({
        code: 'ledger_unavailable',
        message: expect.stringContaining('PostgreSQL did not answer in time'),
      });
      expect(performance.now() - started).toBeLessThan(QUERY_TIMEOUT_MS * 3);
      await Promise.all(ends);
      expect(await ledger.read((db) => db.selectFrom('toolgate_calls').selectAll().execute())).toEqual([]);
    });

    it('writes the result of a tool that returned while the network was silent, once it answers again: committed, run once', async () => {
      const { proxy, connectionString } = await throughProxy(target);
      const ledger = keep(
        await postgresLedger({
          connectionString,
          queryTimeoutMs: QUERY_TIMEOUT_MS,
          onError: () => undefined,
        }),
      );
      let runs = 0;
      const charge = defineTool({
        name: 'charge',
        inputSchema,
        execute: () => {
          runs += 1;
          blackhole(proxy, 1500); // silent as the tool returns, for 1.5 s
          return { charged: true };
        },
      });
      const gate = createServerGate({
        tools: [charge],
        ledger,
        leaseMs: 3000,
        endingRetryMs: 8000,
        onError: () => undefined,
      });
      onTestFinished(() => gate.close());
      expect(await gate.propose({ id: 'c1', name: 'charge', arguments: { n: 1 } }, session)).toMatchObject({
        status: 'executing',
      });
      await Promise.all(ends);
      expect(await settledOnceReachable(gate, 'c1')).toMatchObject({
        status: 'committed',
        output: { charged: true },
      });
      expect(runs).toBe(1);
      expect(await ledger.db.selectFrom('toolgate_calls').select('status').execute()).toEqual([
        { status: 'committed' },
      ]);
    }, 30_000);

    it('lets a result go past the ending retry’s bound, and recovery ends the call once the network answers (a plain tool)', async () => {
      const { proxy, connectionString } = await throughProxy(target);
      const ledger = keep(
        await postgresLedger({
          connectionString,
          queryTimeoutMs: QUERY_TIMEOUT_MS,
          onError: () => undefined,
        }),
      );
      let runs = 0;
      const charge = defineTool({
        name: 'charge',
        inputSchema,
        execute: () => {
          runs += 1;
          blackhole(proxy, 2500);
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
      await Promise.all(ends);
      expect(await settledOnceReachable(gate, 'c1')).toMatchObject({
        status: 'failed',
        reason: { code: 'interrupted' },
      });
      expect(runs).toBe(1);
      expect(await ledger.verify()).toMatchObject({ ok: true });
    }, 30_000);
  },
  { dialects: ['postgres'] },
);
