// Another process holds SQLite's write lock on the ledger's file: writes wait for it on timers,
// so the server goes on answering meanwhile (reads, timers); and two ledger objects on one file in
// one process take turns instead of stalling each other.
import { defineTool } from '@toolgate/core';
import { expect, it, onTestFinished } from 'vitest';
import { createServerGate, sqliteLedger } from '../../src/index.ts';
import { describeLedgers, keep } from '../support/ledgers.ts';
import { start } from '../support/processes.ts';

const work = defineTool({
  name: 'work',
  inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  execute: (input) => ({ n: input.n }),
});
const session = { session: 's1', principal: 'alice' };

/** The longest the event loop went without running a 10 ms timer, while `during` ran. */
async function longestStall<T>(during: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    return { result: await during(), stallMs };
  } finally {
    clearInterval(timer);
  }
}

describeLedgers(
  'a SQLite file locked by someone else',
  (target) => {
    it('keeps the event loop free while a write waits for another process’s lock, and writes once it is let go', async () => {
      const store = await target.fresh();
      const ledger = keep(
        await sqliteLedger({ path: store.location, busyTimeoutMs: 8000, onError: () => undefined }),
      );
      const gate = createServerGate({ tools: [work], ledger, recover: false, onError: () => undefined });
      onTestFinished(() => gate.close());
      expect(await gate.run({ id: 'c0', name: 'work', arguments: { n: 0 } }, session)).toMatchObject({
        status: 'committed',
      });
      const holder = start('sqlite-lock', [store.location]);
      onTestFinished(() => holder.kill('SIGKILL'));
      await holder.line((message) => message['holding'] === true);
      const { result, stallMs } = await longestStall(async () => {
        const writing = gate.run({ id: 'c1', name: 'work', arguments: { n: 1 } }, session);
        // Reads are answered while the write waits (WAL lets them through), and timers run.
        expect(await gate.get('c0')).toMatchObject({ status: 'committed' });
        await new Promise((resolve) => setTimeout(resolve, 1500));
        holder.send({ release: true });
        await holder.line((message) => message['released'] === true);
        return writing;
      });
      expect(result).toMatchObject({ id: 'c1', status: 'committed' });
      // The driver's own busy wait blocked the loop for the whole busy timeout (8 s here).
      expect(stallMs).toBeLessThan(1000);
    }, 40_000);

    it('lets two ledger objects on one file in one process take turns', async () => {
      const store = await target.fresh();
      const gates = await Promise.all(
        [0, 1].map(async () =>
          createServerGate({
            tools: [work],
            ledger: keep(await sqliteLedger({ path: store.location })),
            recover: false,
            onError: () => undefined,
          }),
        ),
      );
      onTestFinished(async () => void (await Promise.all(gates.map((gate) => gate.close()))));
      const { result, stallMs } = await longestStall(() =>
        Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            (gates[i % 2] ?? gates[0])!.run(
              { id: `c${i}`, name: 'work', arguments: { n: i } },
              { session: `s${i}`, principal: 'alice' },
            ),
          ),
        ),
      );
      expect(result.map((call) => call.status)).toEqual(Array(40).fill('committed'));
      expect(stallMs).toBeLessThan(1000);
    }, 40_000);
  },
  { dialects: ['sqlite'], shared: true },
);
