// From a proposal on the server to the status a page shows: a server gate over a SQLite ledger,
// toolgateHandler served by @hono/node-server on 127.0.0.1, and a page's remote gate (in Node)
// following the session over the event feed. Each call is timed from `serverGate.propose` until
// the remote gate's `calls` store holds the committed record. Beside it, the server alone (propose
// until the ledger has the call committed), so the wire's share shows in the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { createStore } from 'zustand/vanilla';
import { latency } from './measure.mjs';

register('./packed.mjs', import.meta.url);
const { defineTool } = await import('../packages/core/dist/index.js');
const { createRemoteGate } = await import('../packages/core/dist/remote.js');
const { createServerGate, sqliteLedger, toolgateHandler } = await import('../packages/server/dist/index.js');

const CALLS = 1000;
const WARMUP = 50;

const addItem = defineTool({
  name: 'add_item',
  inputSchema: {
    type: 'object',
    properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } },
    required: ['sku', 'qty'],
    additionalProperties: false,
  },
  execute: (input) => ({ sku: input.sku, qty: input.qty }),
  commit: (state, output) => ({ lines: state.lines + 1, units: state.units + output.qty }),
});

async function serveGate(path) {
  const ledger = await sqliteLedger({ path });
  const server = createServerGate({ tools: [addItem], ledger });
  const handler = toolgateHandler(server, { authenticate: () => 'alice' });
  const listener = getRequestListener(handler);
  const http = createServer((incoming, outgoing) => void listener(incoming, outgoing));
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const close = async () => {
    await server.close();
    await new Promise((resolve) => {
      http.close(resolve);
      http.closeAllConnections();
    });
    await ledger.close();
  };
  return { server, url: `http://127.0.0.1:${http.address().port}/api/toolgate`, close };
}

/** A page following the session, and `shown(id)`: resolves once its store of calls shows `id` committed. */
async function openPage(url) {
  const store = createStore(() => ({ lines: 0, units: 0 }));
  const page = createRemoteGate({
    url,
    session: 'bench',
    tools: [addItem],
    store,
    onError: (error) => console.error(error),
  });
  await new Promise((resolve) => {
    const stop = page.connection.subscribe((state) => state.state === 'live' && (stop(), resolve()));
  });
  const waiting = new Map();
  page.calls.subscribe((state) => {
    for (const id of state.changed) {
      if (state.records.get(id)?.status !== 'committed') continue;
      waiting.get(id)?.();
      waiting.delete(id);
    }
  });
  return {
    store,
    shown: (id) => new Promise((resolve) => waiting.set(id, resolve)),
    close: () => page.close(),
  };
}

const options = { session: 'bench', principal: 'alice' };
const call = (n) => ({
  id: `call_${n}`,
  name: 'add_item',
  arguments: { sku: `SKU-${1000 + n}`, qty: 1 + (n % 3) },
});

/** Times calls `first`… one after another: until the page shows each committed, or (no page) until `run` answers it committed. */
async function timeCalls(server, page, first, count) {
  const times = [];
  for (let n = first; n < first + count; n++) {
    const shown = page?.shown(call(n).id);
    const t0 = performance.now();
    if (page) {
      await server.propose(call(n), options);
      await shown;
    } else {
      const record = await server.run(call(n), options);
      if (record.status !== 'committed')
        throw new Error(`bench call ended ${record.status}: ${record.reason?.message}`);
    }
    times.push(performance.now() - t0);
  }
  return times;
}

console.log(
  '\nserver: a call proposed on the server gate, until a page shows it committed (1,000 calls each, 127.0.0.1)',
);
console.log(`${'case'.padEnd(58)} ${'p50'.padStart(10)}    ${'p99'.padStart(10)}`);
const directory = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
try {
  for (const [where, path] of [
    ['SQLite file', join(directory, 'ledger.db')],
    ['SQLite in memory', ':memory:'],
  ]) {
    const { server, url, close } = await serveGate(path);
    await timeCalls(server, undefined, 0, WARMUP);
    const alone = await timeCalls(server, undefined, WARMUP, CALLS);
    const page = await openPage(url);
    await timeCalls(server, page, WARMUP + CALLS, WARMUP);
    const shown = await timeCalls(server, page, 2 * WARMUP + CALLS, CALLS);
    // Only the calls made while it was open reached the page's store, each once.
    if (page.store.getState().lines !== WARMUP + CALLS)
      throw new Error(`the page's store has ${page.store.getState().lines} lines, not ${WARMUP + CALLS}`);
    if (where === 'SQLite file') latency(`propose on the server → status shown in the page's store`, shown);
    else latency(`  the same, over a ledger in memory`, shown);
    latency(`  the server alone (${where}): propose → committed`, alone);
    page.close();
    await close();
  }
} finally {
  rmSync(directory, { recursive: true, force: true });
}
