import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, inject, it } from 'vitest';
import { startGateway, testUpstream, scratch, textOf } from './support/gateway.ts';

const note = { path: 'notes/today.md', text: 'buy milk' };
const NEVER = { approval: 'never' } as const;

async function gateway(tools: Record<string, unknown> = {}) {
  const dir = scratch();
  return startGateway({
    dir,
    config: { upstreams: { test: testUpstream(dir) }, tools, approvalWaitMs: 200 },
  });
}

describe('the gateway decides before the upstream sees a call', () => {
  it("refuses arguments that break the upstream's input schema, naming each path, before asking anyone or calling the upstream", async () => {
    const gw = await gateway();
    const result = await gw.client.callTool({
      name: 'write_note',
      arguments: { path: '/etc/passwd', text: 7, copies: 9 },
    });
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({
      'toolgate/status': 'rejected',
      'toolgate/reason': 'invalid_arguments',
    });
    const text = textOf(result);
    expect(text).toContain('- /path: must match the pattern ^notes/ (got string "/etc/passwd")');
    expect(text).toContain('- /text: must be string');
    expect(text).toContain('- /copies: must be <= 3');
    expect(text).toContain('Correct these arguments and call "write_note" again.');
    expect(gw.upstreamLog()).toEqual([]);
  });

  it('refuses an unknown tool with a result the model can read, and stays up', async () => {
    const gw = await gateway({ echo: NEVER });
    const result = await gw.client.callTool({ name: 'rm_rf', arguments: {} });
    expect(result._meta).toMatchObject({ 'toolgate/status': 'rejected', 'toolgate/reason': 'unknown_tool' });
    expect(textOf(await gw.client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe(
      'echo: still here',
    );
  });

  it('refuses a huge argument as too_large without calling the upstream', async () => {
    const gw = await gateway({ echo: NEVER });
    const result = await gw.client.callTool({ name: 'echo', arguments: { text: 'x'.repeat(300_000) } });
    expect(result._meta).toMatchObject({ 'toolgate/status': 'rejected', 'toolgate/reason': 'too_large' });
  });

  it('refuses a call id that is not a string', async () => {
    const gw = await gateway({ echo: NEVER });
    const result = await gw.client.callTool({
      name: 'echo',
      arguments: { text: 'a' },
      _meta: { 'toolgate/callId': 42 },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('_meta["toolgate/callId"] must be a non-empty string');
  });

  it('refuses a tool whose schema cannot be compiled: it is not listed, and a call of it is refused', async () => {
    const gw = await gateway({ bad_schema: NEVER });
    const result = await gw.client.callTool({ name: 'bad_schema', arguments: { x: 1 } });
    expect(result._meta).toMatchObject({
      'toolgate/status': 'rejected',
      'toolgate/reason': 'tool_unavailable',
    });
  });
});

describe('one call id, one run', () => {
  it('runs a re-issued request once and answers it the same', async () => {
    const gw = await gateway({ write_note: NEVER });
    const ask = () =>
      gw.client.callTool({ name: 'write_note', arguments: note, _meta: { 'toolgate/callId': 'retry-1' } });
    const first = await ask();
    expect(await ask()).toEqual(first);
    expect(gw.upstreamLog()).toEqual(['write_note notes/today.md buy milk']);
  });

  it('runs the same call id sent twice at once only once', async () => {
    const gw = await gateway({ write_note: NEVER });
    const ask = () =>
      gw.client.callTool({ name: 'write_note', arguments: note, _meta: { 'toolgate/callId': 'retry-2' } });
    const [a, b] = await Promise.all([ask(), ask()]);
    expect(a).toEqual(b);
    expect(gw.upstreamLog()).toHaveLength(1);
  });

  it('refuses the same call id with other arguments (id_conflict) and keeps the first call', async () => {
    const gw = await gateway({ write_note: NEVER });
    await gw.client.callTool({
      name: 'write_note',
      arguments: note,
      _meta: { 'toolgate/callId': 'retry-3' },
    });
    const other = await gw.client.callTool({
      name: 'write_note',
      arguments: { ...note, text: 'buy cream' },
      _meta: { 'toolgate/callId': 'retry-3' },
    });
    expect(other._meta).toMatchObject({ 'toolgate/status': 'rejected', 'toolgate/reason': 'id_conflict' });
    expect(gw.upstreamLog()).toEqual(['write_note notes/today.md buy milk']);
  });

  it('without a call id, makes one per request, so two requests are two calls', async () => {
    const gw = await gateway({ write_note: NEVER });
    const a = await gw.client.callTool({ name: 'write_note', arguments: note });
    const b = await gw.client.callTool({ name: 'write_note', arguments: note });
    expect(a._meta?.['toolgate/callId']).not.toBe(b._meta?.['toolgate/callId']);
    expect(gw.upstreamLog()).toHaveLength(2);
  });
});

describe('a client that misbehaves', () => {
  it('answers garbage on stdio with JSON-RPC errors where it can, and keeps serving', async () => {
    const dir = scratch();
    const configFile = join(dir, 'toolgate.json');
    writeFileSync(
      configFile,
      JSON.stringify({ ledger: 'ledger.db', upstreams: { test: testUpstream(dir) }, tools: { echo: NEVER } }),
    );
    const child = spawn(process.execPath, [inject('gatewayBin'), '--config', configFile], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const replies: Record<string, unknown>[] = [];
    const waiters: (() => void)[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      replies.push(JSON.parse(line) as Record<string, unknown>);
      for (const wake of waiters.splice(0)) wake();
    });
    const reply = async (id: number) => {
      for (;;) {
        const found = replies.find((message) => message['id'] === id);
        if (found !== undefined) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    const send = (message: unknown) =>
      child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
    try {
      send('this is not json');
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '0' },
        },
      });
      expect(await reply(1)).toMatchObject({ result: { serverInfo: { name: 'toolgate-mcp' } } });
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo', arguments: '{"text":"a string, not an object"}' },
      });
      // The SDK refuses it before the gateway sees it, naming the field.
      const refused = (await reply(2)) as { error: { code: number; message: string } };
      expect(refused.error.message).toContain('"arguments"');
      expect(refused.error.message).toContain('expected record, received string');
      send({ jsonrpc: '2.0', id: 3, method: 'no/such/method' });
      expect(await reply(3)).toMatchObject({ error: { code: -32601 } });
      send([1, 2, 3]);
      send({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 999, reason: 'never started' },
      });
      send({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'still here' } },
      });
      expect(await reply(4)).toMatchObject({
        result: { content: [{ type: 'text', text: 'echo: still here' }] },
      });
    } finally {
      child.kill('SIGTERM');
    }
  });
});
