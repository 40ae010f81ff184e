#!/usr/bin/env node
// An MCP server written for the gateway's tests with the official SDK's low-level Server, so that it
// can also misbehave: lie in its output schema, send what is not JSON-RPC, flood, hang, die.
// Every run of a tool with an effect appends a line to $UPSTREAM_LOG, so a test can count runs.
// `node upstream-server.mjs` speaks stdio; `node upstream-server.mjs --http <port>` Streamable HTTP.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { LATE, PNG, TOOLS, WAV } from './upstream-tools.mjs';

const LOG = process.env.UPSTREAM_LOG;
const note = (line) => LOG && appendFileSync(LOG, `${line}\n`);

function makeServer() {
  const tools = [...TOOLS];
  const server = new Server(
    { name: 'test-upstream', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    const token = request.params._meta?.progressToken;
    const progress = (progress, total, message) =>
      token === undefined
        ? Promise.resolve()
        : extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total, message },
          });
    switch (name) {
      case 'echo':
        return { content: [{ type: 'text', text: `echo: ${args.text}` }] };
      case 'write_note':
        for (let i = 0; i < (args.copies ?? 1); i++) note(`write_note ${args.path} ${args.text}`);
        return { content: [{ type: 'text', text: `wrote ${args.path}` }], structuredContent: undefined };
      case 'rich':
        return {
          content: [
            { type: 'text', text: 'one of each', annotations: { audience: ['user'], priority: 0.5 } },
            { type: 'image', data: PNG, mimeType: 'image/png' },
            { type: 'audio', data: WAV, mimeType: 'audio/wav', _meta: { seconds: 0 } },
            {
              type: 'resource_link',
              uri: 'file:///notes/a.txt',
              name: 'a.txt',
              title: 'Note A',
              mimeType: 'text/plain',
              description: 'a note',
              size: 12,
            },
            {
              type: 'resource',
              resource: { uri: 'file:///notes/b.txt', mimeType: 'text/plain', text: 'note b' },
            },
            {
              type: 'resource',
              resource: { uri: 'file:///notes/c.bin', mimeType: 'application/octet-stream', blob: 'AAEC' },
            },
          ],
          structuredContent: { kinds: ['text', 'image', 'audio', 'resource_link', 'resource'], count: 6 },
          _meta: { 'example.com/trace': 'abc' },
        };
      case 'slow': {
        note(`slow started ${extra.requestId}`);
        for (let step = 1; step <= (args.steps ?? 0); step++) await progress(step, undefined, `step ${step}`);
        return new Promise((_resolve, reject) => {
          extra.signal.addEventListener('abort', () => {
            note(`slow cancelled ${extra.requestId}`);
            reject(new Error('cancelled'));
          });
        });
      }
      case 'progress':
        for (let step = 1; step <= args.steps; step++)
          await progress(step, args.steps, `step ${step} of ${args.steps}`);
        return { content: [{ type: 'text', text: `done in ${args.steps} steps` }] };
      case 'crash':
        note('crash');
        setTimeout(() => process.exit(3), 20);
        return new Promise(() => undefined);
      case 'huge':
        return { content: [{ type: 'text', text: 'x'.repeat(Math.round(args.mb * 1024 * 1024)) }] };
      case 'garbage':
        if (args.kind === 'not_json') process.stdout.write('{"jsonrpc":"2.0","id": this is not json\n');
        else
          process.stdout.write(
            `${JSON.stringify({ jsonrpc: '2.0', id: extra.requestId, result: { content: 'not a list' } })}\n`,
          );
        return new Promise(() => undefined);
      case 'flood':
        for (let i = 0; i < args.n; i++) {
          void server.sendLoggingMessage({ level: 'info', data: `flood ${i}` });
          void progress(i + 1, args.n);
          void extra.sendNotification({ method: 'notifications/tools/list_changed' });
        }
        return { content: [{ type: 'text', text: `sent ${args.n}` }] };
      case 'lie':
        return { content: [{ type: 'text', text: 'many' }], structuredContent: { count: 'many' } };
      case 'add_tool':
        if (!tools.includes(LATE)) tools.push(LATE);
        await server.sendToolListChanged();
        return { content: [{ type: 'text', text: 'added late' }] };
      case 'late':
        note(`late ${args.n}`);
        return { content: [{ type: 'text', text: `late ${args.n}` }] };
      case 'fail':
        return { content: [{ type: 'text', text: 'the note is locked' }], isError: true };
      default:
        return { content: [{ type: 'text', text: `no tool ${name}` }], isError: true };
    }
  });
  return server;
}

const http = process.argv.indexOf('--http');
if (http === -1) {
  await makeServer().connect(new StdioServerTransport());
} else {
  const transports = new Map();
  const listener = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (transport === undefined) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => transports.set(sid, transport),
      });
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  listener.listen(Number(process.argv[http + 1]), '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ listening: listener.address().port })}\n`);
  });
}
