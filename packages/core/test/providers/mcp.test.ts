import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createServer } from '@modelcontextprotocol/server-everything/dist/server/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolGate } from '../../src/index.ts';
import { mcpToolList, mcpToolResult, mcpTools, type McpClientLike } from '../../src/mcp.ts';
import { openaiChatTools } from '../../src/openai.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function connect(server: McpServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'toolgate-test', version: '1.0.0' });
  await client.connect(clientSide);
  cleanups.push(() => client.close());
  return client;
}

async function everything(): Promise<Client> {
  const { server, cleanup } = createServer();
  cleanups.push(() => cleanup());
  return connect(server);
}

/** A server of our own with a slow tool that reports when its request is cancelled, and a failing one. */
async function workshop() {
  const server = new McpServer({ name: 'workshop', version: '1.0.0' });
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let aborted!: (reason: unknown) => void;
  const serverSawAbort = new Promise<unknown>((resolve) => (aborted = resolve));
  server.registerTool('slow_export', { inputSchema: { rows: z.number().int() } }, (_args, extra) => {
    started();
    return new Promise((_resolve, reject) => {
      extra.signal.addEventListener('abort', () => {
        aborted(extra.signal.reason);
        reject(new Error('aborted'));
      });
    });
  });
  server.registerTool('delete_report', { inputSchema: { id: z.string() } }, ({ id }) => ({
    content: [{ type: 'text', text: `report ${id} is locked` }],
    isError: true,
  }));
  const client = await connect(server);
  return { client, running, serverSawAbort };
}

describe('MCP tools through the gate', () => {
  it("lists server-everything's tools as gate tools validated against the server's own schemas", async () => {
    const client = await everything();
    const tools = await mcpTools(client);
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']),
    );
    expect(openaiChatTools(tools.filter((t) => t.name === 'get-sum'))[0]?.function).toMatchObject({
      name: 'get-sum',
      parameters: { type: 'object', required: ['a', 'b'] },
      strict: true,
    });
  });

  it('runs a valid call on the server and commits its output', async () => {
    const client = await everything();
    const gate = createToolGate({ tools: await mcpTools(client) });
    const call = await gate.run({ id: 'c1', name: 'get-sum', arguments: '{"a":2,"b":3}' });
    expect(call).toMatchObject({ status: 'committed', output: 'The sum of 2 and 3 is 5.' });
    const structured = await gate.run({
      id: 'c2',
      name: 'get-structured-content',
      arguments: { location: 'Chicago' },
    });
    expect(structured).toMatchObject({
      status: 'committed',
      output: { temperature: expect.any(Number) as number },
    });
  });

  it('rejects invalid values before anything reaches the server', async () => {
    const client = await everything();
    const sent: string[] = [];
    const watched: McpClientLike = {
      listTools: (params, options) => client.listTools(params, options),
      callTool: (params, resultSchema, options) => {
        sent.push(params.name);
        return client.callTool(params, resultSchema, options);
      },
    };
    const gate = createToolGate({ tools: await mcpTools(watched) });
    const call = await gate.run({ id: 'c1', name: 'get-sum', arguments: '{"a":"2","b":3}' });
    expect(call).toMatchObject({
      status: 'rejected',
      reason: { code: 'invalid_arguments', issues: [{ path: '/a' }] },
    });
    const unknown = await gate.run({ id: 'c2', name: 'get_sum', arguments: '{}' });
    expect(unknown).toMatchObject({ status: 'rejected', reason: { code: 'unknown_tool' } });
    expect(sent).toEqual([]);
  });

  it('fails a call whose result has isError, with the server text as the reason', async () => {
    const { client } = await workshop();
    const gate = createToolGate({ tools: await mcpTools(client) });
    const call = await gate.run({ id: 'd1', name: 'delete_report', arguments: { id: 'r-9' } });
    expect(call).toMatchObject({ status: 'failed', reason: { code: 'tool_error' } });
    expect(call.reason?.message).toContain('report r-9 is locked');
    expect(mcpToolResult(call)).toMatchObject({ isError: true });
  });

  it('cancels a slow call: the gate says cancelled and the server sees its request aborted', async () => {
    const { client, running, serverSawAbort } = await workshop();
    const gate = createToolGate({ tools: await mcpTools(client) });
    gate.propose({ id: 's1', name: 'slow_export', arguments: { rows: 10 } });
    await running;
    expect(gate.get('s1')?.status).toBe('executing');
    gate.cancel('s1', 'the user stopped the export');
    expect(await gate.settled('s1')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'user_cancelled' },
    });
    await expect(serverSawAbort).resolves.toBeDefined();
  });

  it('adds app policy a server cannot express: approval before the call is sent', async () => {
    const client = await everything();
    const gate = createToolGate({
      tools: await mcpTools(client, { prefix: 'demo_', policy: { echo: { needsApproval: true } } }),
    });
    const call = gate.propose({ id: 'e1', name: 'demo_echo', arguments: { message: 'hi' } });
    expect(call.status).toBe('awaiting_approval');
    gate.approve('e1');
    expect(await gate.settled('e1')).toMatchObject({ status: 'committed', output: 'Echo: hi' });
  });

  it("serves the gate's own tools as tools/list entries", async () => {
    const client = await everything();
    const tools = await mcpTools(client, { filter: (tool) => tool.name === 'echo' });
    expect(mcpToolList(tools)).toEqual([
      {
        name: 'echo',
        description: 'Echoes back the input string',
        inputSchema: expect.objectContaining({ type: 'object', required: ['message'] }) as unknown,
      },
    ]);
  });
});
