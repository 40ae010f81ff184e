// A client that reads the event feed slowly, or stops reading, while its session produces a burst:
// the server must not hold everything produced meanwhile, and the client, once it reads again,
// still gets every event once and in order. And one principal's feeds are bounded in number.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setTimeout as delay } from 'node:timers/promises';
import { defineTool } from '@toolgate/core';
import { createParser } from 'eventsource-parser';
import { afterEach, expect, it } from 'vitest';
import { createServerGate, toolgateHandler, type ToolgateHandlerOptions } from '../../src/index.ts';
import { as, bearer, openFeed, serve } from '../support/http.ts';
import { describeLedgers, type Target } from '../support/ledgers.ts';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

/** Memory a feed could hold: the JS heap and the buffers outside it. */
function held(): number {
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

// Each call carries 40 KB of input, in every one of its four events: 100 calls are 16 MB of feed.
const CALLS = 100;
const note = 'n'.repeat(40_000);
const echo = defineTool({
  name: 'echo',
  inputSchema: {
    type: 'object',
    properties: { n: { type: 'integer' }, note: { type: 'string' } },
    required: ['n', 'note'],
  },
  execute: (input) => ({ n: input.n }),
});

let cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function setup(target: Target, handler: Partial<ToolgateHandlerOptions> = {}) {
  const store = await target.fresh();
  const ledger = await store.open();
  const gate = createServerGate({ tools: [echo], ledger, recover: false });
  const served = await serve(toolgateHandler(gate, { authenticate: bearer, ...handler }));
  cleanup.push(
    () => ledger.close(),
    () => gate.close(),
    () => served.close(),
  );
  /**
   * Another app server on the same ledger proposes `CALLS` calls in session s1, and goes: what the
   * server under test holds afterwards is its feed's, not the proposing gate's own.
   */
  const burst = async () => {
    const other = await store.open();
    const writer = createServerGate({ tools: [echo], ledger: other, recover: false });
    for (let n = 0; n < CALLS; n += 20) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          writer.run(
            { id: `c${n + i}`, name: 'echo', arguments: { n: n + i, note } },
            { session: 's1', principal: 'alice' },
          ),
        ),
      );
    }
    await writer.close();
    await other.close();
  };
  return { gate, served, burst, base: `${served.origin}/api/toolgate` };
}

/** Opens the feed with fetch and reads only as far as the caller asks. */
async function slowFeed(url: string, principal: string) {
  const response = await fetch(url, { headers: as(principal, { accept: 'text/event-stream' }) });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const seqs: number[] = [];
  let snapshot = false;
  const parser = createParser({
    onEvent: (message) => {
      if (message.event === 'snapshot') snapshot = true;
      if (message.event === 'move') seqs.push(Number(message.id));
    },
  });
  const decoder = new TextDecoder();
  let ended = false;
  /** Reads until `done()` holds or the stream ends. */
  const readUntil = async (done: () => boolean) => {
    while (!done() && !ended) {
      const chunk = await reader.read();
      if (chunk.done) ended = true;
      else parser.feed(decoder.decode(chunk.value, { stream: true }));
    }
  };
  cleanup.push(() => reader.cancel().catch(() => undefined));
  return { seqs, readUntil, snapshot: () => snapshot, ended: () => ended };
}

describeLedgers(
  'an event feed read slowly',
  (target) => {
    it('holds a bounded amount for a client that stops reading during a burst, and gives it every event once it reads again', async () => {
      const { gate, base, burst } = await setup(target);
      const feed = await slowFeed(`${base}/sessions/s1/events`, 'alice');
      await feed.readUntil(feed.snapshot);
      const before = held();
      await burst(); // while the client reads nothing
      const head = await gate.head();
      // Whatever the server would push towards the client has been pushed by now (a SQLite ledger
      // hears of another process's commits within its pollMs).
      await delay(1000);
      const grown = held() - before;
      console.info(
        `${target.name}: ${head} events (${Math.round((head * note.length) / 1e6)} MB of feed) unread; the server holds ${(grown / 1e6).toFixed(1)} MB more`,
      );
      // The feed's own bound here is 64 KiB of unread events and 32 moves (about 1.3 MB); the rest
      // is the database driver's read buffers, grown to the largest page a pooled connection read,
      // and what the collector has not returned (2–5 MB measured in all). A feed that held what
      // it could not send would hold the whole 16 MB.
      expect(grown).toBeLessThan(8e6);
      await feed.readUntil(() => feed.seqs.at(-1) === head);
      expect(feed.ended()).toBe(false);
      expect(feed.seqs).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    }, 60_000);
  },
  { shared: true },
);

describeLedgers('event feeds of one principal', (target) => {
  it('are bounded in number: one more ends the principal’s oldest, and leaves everyone else’s open', async () => {
    const { gate, base } = await setup(target, { maxFeedsPerPrincipal: 3 });
    const url = `${base}/sessions/s1/events`;
    const opened = async (principal: string) => {
      const feed = await openFeed(url, { principal });
      await feed.until(() => feed.messages.length > 0);
      let ended = false;
      void feed.ended.then(() => (ended = true));
      cleanup.push(() => feed.close());
      return { feed, ended: () => ended };
    };
    const alice = [await opened('alice'), await opened('alice'), await opened('alice')];
    // Another principal's feeds count for them alone.
    const other = await opened('bob');
    expect([...alice, other].map((one) => one.ended())).toEqual([false, false, false, false]);
    const newest = await opened('alice');
    await alice[0]?.feed.ended;
    await gate.run(
      { id: 'c1', name: 'echo', arguments: { n: 1, note: '' } },
      { session: 's1', principal: 'alice' },
    );
    for (const open of [...alice.slice(1), newest]) await open.feed.until(() => open.feed.moves().length > 0);
    expect([...alice, newest, other].map((one) => one.ended())).toEqual([true, false, false, false, false]);
  });
});
