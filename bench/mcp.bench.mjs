// The gateway's cost per call: a tool with `"approval": "never"` called through `toolgate-mcp` (the
// built bin, a real process, an SQLite ledger file) against the same upstream called directly over
// stdio with the same SDK Client, interleaved round by round; p50 and p99 of each, and what the
// gateway adds. Target: at most 2 ms added at p50 (the extra hop and the ledger's commits).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire, register } from 'node:module';

const mcp = fileURLToPath(new URL('../packages/mcp/', import.meta.url));
const require = createRequire(mcp);
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { StdioClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/stdio.js'));

const UPSTREAM = join(mcp, 'test/support/upstream-server.mjs');
const BIN = join(mcp, 'dist/bin.js');
// The workspace's @toolgate/* packages resolve to their built dist/, as in the packed packages.
const BUILT = join(mcp, 'e2e/built-packages.mjs');
const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'toolgate-mcp-bench-'));
const config = join(dir, 'toolgate.json');
writeFileSync(config, JSON.stringify({ ledger: 'ledger.db', upstreams: { test: { command: process.execPath, args: [UPSTREAM] } }, tools: { echo: { approval: 'never' } } }));

async function connect(args) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  await client.listTools();
  return client;
}

// The server gate alone on an SQLite file of its own, running a tool that awaits the same upstream
// over the same SDK Client: what the ledger's commits cost, so the row shows what the MCP hop adds.
register('./packed.mjs', import.meta.url);
const { defineTool } = await import('../packages/core/dist/index.js');
const { createServerGate, sqliteLedger } = await import('../packages/server/dist/index.js');
const ledger = await sqliteLedger({ path: join(dir, 'alone.db') });

const direct = await connect([UPSTREAM]);
const echo = defineTool({ name: 'echo', inputSchema: { type: 'object' }, execute: (input) => direct.callTool({ name: 'echo', arguments: input }) });
const alone = createServerGate({ tools: [echo], ledger });
let aloneCalls = 0;
const gateway = await connect(['--import', BUILT, BIN, '--config', config]);
const args = { text: 'a short line of text, as a tool call often carries' };
const once = async (client) => {
  const t0 = performance.now();
  const result = await client.callTool({ name: 'echo', arguments: args });
  const ms = performance.now() - t0;
  if (result.isError) throw new Error(`bench call failed: ${JSON.stringify(result.content)}`);
  return ms;
};

const ROUNDS = 20;
const PER_ROUND = 50;
const samples = { direct: [], gateway: [], alone: [] };
const sides = {
  direct: () => once(direct),
  gateway: () => once(gateway),
  async alone() {
    const t0 = performance.now();
    const call = await alone.run({ id: `alone-${aloneCalls++}`, name: 'echo', arguments: args }, { session: 'bench', principal: 'bench' });
    if (call.status !== 'committed') throw new Error(`bench call ended ${call.status}`);
    return performance.now() - t0;
  },
};
for (let round = 0; round < ROUNDS + 2; round++) {
  const order = round % 2 === 0 ? ['direct', 'gateway', 'alone'] : ['alone', 'gateway', 'direct'];
  for (const side of order) {
    for (let i = 0; i < PER_ROUND; i++) {
      const ms = await sides[side]();
      if (round >= 2) samples[side].push(ms);
    }
  }
}
await alone.close();
await ledger.close();
await direct.close();
await gateway.close();
rmSync(dir, { recursive: true, force: true });

const at = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
};
const fmt = (ms) => `${ms.toFixed(2)} ms`;
const p50 = { direct: at(samples.direct, 0.5), gateway: at(samples.gateway, 0.5) };
const p99 = { direct: at(samples.direct, 0.99), gateway: at(samples.gateway, 0.99) };
const added = p50.gateway - p50.direct;
const TARGET_MS = 2;
console.log(`\nMCP gateway: an "approval": "never" tool over stdio, ${samples.direct.length} calls each (SQLite ledger file)`);
console.log(`${'through toolgate-mcp vs the upstream directly, p50'.padEnd(58)} ${fmt(p50.gateway).padStart(10)} vs ${fmt(p50.direct).padStart(10)}  +${fmt(added)}  (target ≤ +${TARGET_MS} ms) ${added <= TARGET_MS ? 'ok' : 'MISSED'}`);
console.log(`${'through toolgate-mcp vs the upstream directly, p99'.padEnd(58)} ${fmt(p99.gateway).padStart(10)} vs ${fmt(p99.direct).padStart(10)}  +${fmt(p99.gateway - p99.direct)}`);
const gateOnly = at(samples.alone, 0.5) - p50.direct;
console.log(`${'  of which the server gate and its ledger alone, p50'.padEnd(58)} ${fmt(at(samples.alone, 0.5)).padStart(10)} vs ${fmt(p50.direct).padStart(10)}  +${fmt(gateOnly)}  (the MCP hop: +${fmt(added - gateOnly)})`);
