// The gateway's cost per call: a tool with `"approval": "never"` called through `toolgate-mcp` (the
// built bin, a real process, an SQLite ledger file) against the same upstream called directly over
// stdio with the same SDK Client, interleaved round by round; p50 and p99 of each, and what the
// gateway adds. Target: at most 2 ms added at p50 (the extra hop and the ledger's commits).
//
// Beside it, in the same rounds, the server gate alone on a ledger file of its own running a tool
// that awaits the same upstream: what the ledger's commits cost (on SQLite with synchronous=FULL,
// a disk flush each), so the row also shows what the MCP hop itself adds. The rows run once with
// the ledger on disk and, where there is one, once on tmpfs (/dev/shm), where a flush costs nothing.
//
// And against a gateway written by hand (mcp-by-hand.mjs) doing the same work: the same SDK on both
// sides, the same two durable commits per call on an SQLite file beside the gateway's (WAL,
// synchronous=FULL), the same hop to the same upstream. What each adds to the upstream called
// directly, at p50 and p99: toolgate-mcp's at most 1.5× the hand-written one's at both. Its two
// commits run alone too (by-hand-ledger.mjs, in this process around the same upstream call, as the
// server gate alone does), so a miss shows whether it is in the ledger's work or in the MCP layer.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire, register } from 'node:module';

const mcp = fileURLToPath(new URL('../packages/mcp/', import.meta.url));
const require = createRequire(mcp);
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { StdioClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/stdio.js'));
register('./packed.mjs', import.meta.url);
const { defineTool } = await import('../packages/core/dist/index.js');
const { createServerGate, sqliteLedger } = await import('../packages/server/dist/index.js');
const { openByHandLedger } = await import('./by-hand-ledger.mjs');

const UPSTREAM = join(mcp, 'test/support/upstream-server.mjs');
const BIN = join(mcp, 'dist/bin.js');
// The workspace's @toolgate/* packages resolve to their built dist/, as in the packed packages.
const BUILT = join(mcp, 'e2e/built-packages.mjs');
const ROUNDS = 20;
const PER_ROUND = 50;
const TARGET_MS = 2;
const TARGET_RATIO = 1.5;
const BY_HAND = fileURLToPath(new URL('./mcp-by-hand.mjs', import.meta.url));
let missed = false;
const args = { text: 'a short line of text, as a tool call often carries' };

async function connect(commandArgs) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: commandArgs, stderr: 'ignore' }),
  );
  await client.listTools();
  return client;
}

const at = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
};
const fmt = (ms) => `${ms.toFixed(2)} ms`;

/** Runs the three sides round by round with the ledgers in `where`, and prints the rows. */
async function measure(where, label) {
  const dir = mkdtempSync(join(where, 'toolgate-mcp-bench-'));
  const config = join(dir, 'toolgate.json');
  writeFileSync(
    config,
    JSON.stringify({
      ledger: 'ledger.db',
      upstreams: { test: { command: process.execPath, args: [UPSTREAM] } },
      tools: { echo: { approval: 'never' } },
    }),
  );
  const direct = await connect([UPSTREAM]);
  const gateway = await connect(['--import', BUILT, BIN, '--config', config]);
  const byHand = await connect([BY_HAND, join(dir, 'by-hand.db'), UPSTREAM]);
  const ledger = await sqliteLedger({ path: join(dir, 'alone.db') });
  const echo = defineTool({
    name: 'echo',
    inputSchema: { type: 'object' },
    execute: (input) => direct.callTool({ name: 'echo', arguments: input }),
  });
  const alone = createServerGate({ tools: [echo], ledger });
  let aloneCalls = 0;
  const handLedger = openByHandLedger(join(dir, 'by-hand-alone.db'));
  const timed = async (call) => {
    const t0 = performance.now();
    await call();
    return performance.now() - t0;
  };
  const through = (client) => async () => {
    const result = await client.callTool({ name: 'echo', arguments: args });
    if (result.isError) throw new Error(`bench call failed: ${JSON.stringify(result.content)}`);
  };
  const sides = {
    direct: through(direct),
    gateway: through(gateway),
    byHand: through(byHand),
    async alone() {
      const call = await alone.run(
        { id: `alone-${aloneCalls++}`, name: 'echo', arguments: args },
        { session: 'bench', principal: 'bench' },
      );
      if (call.status !== 'committed') throw new Error(`bench call ended ${call.status}`);
    },
    async byHandAlone() {
      const id = `alone-${aloneCalls++}`;
      handLedger.propose(id, 'echo', args);
      const result = await direct.callTool({ name: 'echo', arguments: args });
      handLedger.end(id, result.isError ? 'failed' : 'committed', result);
      if (result.isError) throw new Error(`bench call failed: ${JSON.stringify(result.content)}`);
    },
  };
  const samples = { direct: [], gateway: [], byHand: [], alone: [], byHandAlone: [] };
  for (let round = 0; round < ROUNDS + 2; round++) {
    const order =
      round % 2 === 0
        ? ['direct', 'gateway', 'byHand', 'alone', 'byHandAlone']
        : ['byHandAlone', 'alone', 'byHand', 'gateway', 'direct'];
    for (const side of order) {
      for (let i = 0; i < PER_ROUND; i++) {
        const ms = await timed(sides[side]);
        if (round >= 2) samples[side].push(ms);
      }
    }
  }
  await alone.close();
  await ledger.close();
  handLedger.close();
  await direct.close();
  await gateway.close();
  await byHand.close();
  rmSync(dir, { recursive: true, force: true });

  const p50 = {
    direct: at(samples.direct, 0.5),
    gateway: at(samples.gateway, 0.5),
    alone: at(samples.alone, 0.5),
    byHandAlone: at(samples.byHandAlone, 0.5),
  };
  p50.byHand = at(samples.byHand, 0.5);
  const p99 = {
    direct: at(samples.direct, 0.99),
    gateway: at(samples.gateway, 0.99),
    byHand: at(samples.byHand, 0.99),
  };
  const added = p50.gateway - p50.direct;
  const ledgerOnly = p50.alone - p50.direct;
  const handLedgerOnly = p50.byHandAlone - p50.direct;
  console.log(
    `\nMCP gateway, ledger ${label}: an "approval": "never" tool over stdio, ${samples.direct.length} calls each side`,
  );
  console.log(
    `${'through toolgate-mcp vs the upstream directly, p50'.padEnd(58)} ${fmt(p50.gateway).padStart(10)} vs ${fmt(p50.direct).padStart(10)}  +${fmt(added)}  (target ≤ +${TARGET_MS} ms) ${added <= TARGET_MS ? 'ok' : 'MISSED'}`,
  );
  console.log(
    `${'through toolgate-mcp vs the upstream directly, p99'.padEnd(58)} ${fmt(p99.gateway).padStart(10)} vs ${fmt(p99.direct).padStart(10)}  +${fmt(p99.gateway - p99.direct)}`,
  );
  for (const [name, q] of [
    ['p50', p50],
    ['p99', p99],
  ]) {
    const ours = q.gateway - q.direct;
    const theirs = q.byHand - q.direct;
    const ratio = ours / theirs;
    const ok = ratio <= TARGET_RATIO;
    if (!ok) missed = true;
    console.log(
      `${`added vs a hand-written gateway (same SDK, commits, hop), ${name}`.padEnd(58)} +${fmt(ours).padStart(9)} vs +${fmt(theirs).padStart(9)}  ${ratio.toFixed(2)}×  (target ≤ ${TARGET_RATIO}×) ${ok ? 'ok' : 'MISSED'}`,
    );
  }
  console.log(
    `${'  the server gate and its ledger alone, p50'.padEnd(58)} ${fmt(p50.alone).padStart(10)} vs ${fmt(p50.direct).padStart(10)}  +${fmt(ledgerOnly)}  (so the MCP hop: +${fmt(added - ledgerOnly)})`,
  );
  console.log(
    `${'  the hand-written commits alone, p50'.padEnd(58)} ${fmt(p50.byHandAlone).padStart(10)} vs ${fmt(p50.direct).padStart(10)}  +${fmt(handLedgerOnly)}  (so its MCP hop: +${fmt(p50.byHand - p50.direct - handLedgerOnly)})`,
  );
}

await measure(tmpdir(), `on disk (${tmpdir()})`);
if (existsSync('/dev/shm')) await measure('/dev/shm', 'on tmpfs (/dev/shm: flushes cost nothing)');
console.log(
  `load: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')} (1, 5, 15 min)`,
);
if (missed) process.exitCode = 1;
