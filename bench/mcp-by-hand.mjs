#!/usr/bin/env node
// A gateway written by hand for the MCP bench, doing the work toolgate-mcp does for an
// `"approval": "never"` tool and nothing more: the same MCP SDK on both sides (a low-level Server on
// stdio, a Client to the upstream over stdio), and for each call two durable commits on an SQLite
// file opened as the ledger opens it (better-sqlite3, WAL, synchronous=FULL): a proposal row before
// the call goes upstream, its end row after the answer comes back.
// `node mcp-by-hand.mjs <ledger.db> <upstream.mjs>`
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { openByHandLedger } from './by-hand-ledger.mjs';

const mcp = fileURLToPath(new URL('../packages/mcp/', import.meta.url));
const require = createRequire(mcp);
const sdk = (path) => import(require.resolve(`@modelcontextprotocol/sdk/${path}`));
const { Server } = await sdk('server/index.js');
const { StdioServerTransport } = await sdk('server/stdio.js');
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = await sdk('types.js');

const [path, upstreamScript] = process.argv.slice(2);
const ledger = openByHandLedger(path);

const upstream = new Client({ name: 'by-hand', version: '1.0.0' });
await upstream.connect(
  new StdioClientTransport({ command: process.execPath, args: [upstreamScript], stderr: 'ignore' }),
);
const { tools } = await upstream.listTools();

const server = new Server({ name: 'by-hand', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
let next = 0;
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name, arguments: args = {} } = request.params;
  const id = `call_${process.pid}_${next++}`;
  ledger.propose(id, name, args);
  try {
    const result = await upstream.callTool({ name, arguments: args });
    ledger.end(id, result.isError ? 'failed' : 'committed', result);
    return result;
  } catch (error) {
    ledger.end(id, 'failed', { error: String(error) });
    return { isError: true, content: [{ type: 'text', text: String(error) }] };
  }
});
// The client gone, the gateway goes too (and its upstream with it).
process.stdin.once('end', () => process.exit(0));
await server.connect(new StdioServerTransport());
