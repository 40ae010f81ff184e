#!/usr/bin/env node
// A gateway written by hand for the MCP bench, doing the work toolgate-mcp does for an
// `"approval": "never"` tool and nothing more: the same MCP SDK on both sides (a low-level Server on
// stdio, a Client to the upstream over stdio), and for each call two durable commits on an SQLite
// file opened as the ledger opens it (better-sqlite3, WAL, synchronous=FULL): a proposal row before
// the call goes upstream, its end row after the answer comes back.
// `node mcp-by-hand.mjs <ledger.db> <upstream.mjs>`
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const mcp = fileURLToPath(new URL('../packages/mcp/', import.meta.url));
const require = createRequire(mcp);
const sdk = (path) => import(require.resolve(`@modelcontextprotocol/sdk/${path}`));
const { Server } = await sdk('server/index.js');
const { StdioServerTransport } = await sdk('server/stdio.js');
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = await sdk('types.js');
const Database = require('better-sqlite3');

const [path, upstreamScript] = process.argv.slice(2);
const db = new Database(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`create table if not exists calls (
  id text primary key, tool text not null, input text not null, status text not null,
  output text, created_at integer not null, updated_at integer not null)`);
const propose = db.prepare(
  "insert into calls (id, tool, input, status, created_at, updated_at) values (?, ?, ?, 'executing', ?, ?)",
);
const end = db.prepare('update calls set status = ?, output = ?, updated_at = ? where id = ?');

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
  propose.run(id, name, JSON.stringify(args), Date.now(), Date.now());
  try {
    const result = await upstream.callTool({ name, arguments: args });
    end.run(result.isError ? 'failed' : 'committed', JSON.stringify(result), Date.now(), id);
    return result;
  } catch (error) {
    end.run('failed', JSON.stringify({ error: String(error) }), Date.now(), id);
    return { isError: true, content: [{ type: 'text', text: String(error) }] };
  }
});
// The client gone, the gateway goes too (and its upstream with it).
process.stdin.once('end', () => process.exit(0));
await server.connect(new StdioServerTransport());
