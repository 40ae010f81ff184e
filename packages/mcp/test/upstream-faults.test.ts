import { describe, expect, it } from 'vitest';
import { startGateway, testUpstream, scratch, textOf, waitFor } from './support/gateway.ts';
import { pageCalls } from './support/page-api.ts';

const NEVER = { approval: 'never' } as const;

async function gateway(tools: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const dir = scratch();
  return startGateway({
    dir,
    config: {
      upstreams: { test: testUpstream(dir) },
      tools: { echo: NEVER, ...tools },
      principal: 'ada',
      ...extra,
    },
  });
}

/** Resolves once the gateway has connected to its upstream again after losing it. */
const reconnected = (gw: { stderr: () => string }, times = 1) =>
  waitFor(() => (gw.stderr().match(/\[test\] connected again/g)?.length ?? 0) >= times);

describe('an upstream that misbehaves', () => {
  it('dies in the middle of a call: the call fails saying it may or may not have taken effect, and the gateway starts it again', async () => {
    const gw = await gateway({ crash: NEVER });
    const result = await gw.client.callTool({ name: 'crash', arguments: {} });
    expect(result._meta).toMatchObject({ 'toolgate/status': 'failed', 'toolgate/reason': 'tool_error' });
    expect(textOf(result)).toContain(
      'the upstream "test" closed its connection while the call ran; it may or may not have taken effect',
    );
    await reconnected(gw);
    expect(textOf(await gw.client.callTool({ name: 'echo', arguments: { text: 'back' } }))).toBe(
      'echo: back',
    );
    expect(gw.upstreamLog()).toEqual(['crash']);
  });

  it('sends what is not JSON-RPC and never answers: the call times out as cancelled (timeout), and the gateway stays up', async () => {
    const gw = await gateway({ garbage: { approval: 'never', timeoutMs: 800 } });
    const result = await gw.client.callTool({ name: 'garbage', arguments: { kind: 'not_json' } });
    expect(result._meta).toMatchObject({ 'toolgate/status': 'cancelled', 'toolgate/reason': 'timeout' });
    expect(gw.stderr()).toMatch(/\[test\] .*JSON/);
    expect(textOf(await gw.client.callTool({ name: 'echo', arguments: { text: 'up' } }))).toBe('echo: up');
  });

  it('answers a tools/call with something that is not an MCP result: the call fails and says so', async () => {
    const gw = await gateway({ garbage: NEVER });
    const result = await gw.client.callTool({ name: 'garbage', arguments: { kind: 'bad_result' } });
    expect(result._meta).toMatchObject({ 'toolgate/status': 'failed', 'toolgate/reason': 'tool_error' });
    expect(textOf(result)).toContain('not an MCP tool result');
    expect(textOf(await gw.client.callTool({ name: 'echo', arguments: { text: 'up' } }))).toBe('echo: up');
  });

  it('lies in its output schema: the result is not passed on, and the call fails naming what does not match', async () => {
    const gw = await gateway({ lie: NEVER });
    const result = await gw.client.callTool({ name: 'lie', arguments: {} });
    expect(result._meta).toMatchObject({ 'toolgate/status': 'failed', 'toolgate/reason': 'tool_error' });
    expect(textOf(result)).toContain(
      'its structuredContent does not match the outputSchema it declares (/count: must be integer',
    );
  });

  it('returns 50 MB: the result is refused at the size limit, the upstream restarted, and the gateway stays up', async () => {
    const gw = await gateway({ huge: NEVER });
    const result = await gw.client.callTool({ name: 'huge', arguments: { mb: 50 } });
    expect(result._meta).toMatchObject({ 'toolgate/status': 'failed', 'toolgate/reason': 'tool_error' });
    expect(textOf(result)).toContain("over the gateway's limit of 16777216 bytes");
    await reconnected(gw);
    // A result under the limit still passes whole.
    const fine = await gw.client.callTool({ name: 'huge', arguments: { mb: 1 } });
    expect(textOf(fine)).toHaveLength(1024 * 1024);
  });

  it('floods notifications: the call is answered and the gateway keeps serving', async () => {
    const gw = await gateway({ flood: NEVER });
    let progress = 0;
    const result = await gw.client.callTool({ name: 'flood', arguments: { n: 3000 } }, undefined, {
      onprogress: () => void (progress += 1),
    });
    expect(textOf(result)).toBe('sent 3000');
    expect(progress).toBeGreaterThan(0);
    expect(textOf(await gw.client.callTool({ name: 'echo', arguments: { text: 'up' } }))).toBe('echo: up');
  });

  it('hangs at start: the gateway serves without its tools and says why', async () => {
    const dir = scratch();
    const gw = await startGateway({
      dir,
      config: {
        upstreams: { stuck: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] } },
        connectTimeoutMs: 500,
      },
    });
    expect((await gw.client.listTools()).tools).toEqual([]);
    expect(gw.stderr()).toContain('[stuck] could not connect');
  });
});

describe('a client that cancels', () => {
  it('cancels the call in the ledger and upstream when the client sends notifications/cancelled', async () => {
    const gw = await gateway({ slow: NEVER });
    const abort = new AbortController();
    const answer = gw.client.callTool(
      { name: 'slow', arguments: { steps: 1 }, _meta: { 'toolgate/callId': 'slow-1' } },
      undefined,
      { signal: abort.signal, onprogress: () => abort.abort('the person pressed stop') },
    );
    await expect(answer).rejects.toThrow();
    await waitFor(() => gw.upstreamLog().some((line) => line.startsWith('slow cancelled')));
    const [call] = await pageCalls(gw.approvalUrl, 'mcp:ada');
    expect(call).toMatchObject({ id: 'slow-1', status: 'cancelled' });
    const again = await gw.client.callTool({
      name: 'slow',
      arguments: { steps: 1 },
      _meta: { 'toolgate/callId': 'slow-1' },
    });
    expect(again._meta).toMatchObject({
      'toolgate/status': 'cancelled',
      'toolgate/reason': 'user_cancelled',
    });
    expect(textOf(again)).toContain('the client cancelled the request: the person pressed stop');
    expect(gw.upstreamLog().filter((line) => line.startsWith('slow started'))).toHaveLength(1);
  });

  it('cancels a call that waits for a person', async () => {
    const gw = await gateway({}, { approvalWaitMs: 20_000 });
    const abort = new AbortController();
    const answer = gw.client.callTool(
      {
        name: 'write_note',
        arguments: { path: 'notes/a', text: 'a' },
        _meta: { 'toolgate/callId': 'wait-1' },
      },
      undefined,
      { signal: abort.signal },
    );
    await waitFor(async () => (await pageCalls(gw.approvalUrl, 'mcp:ada')).length > 0);
    abort.abort();
    await expect(answer).rejects.toThrow();
    await waitFor(async () => (await pageCalls(gw.approvalUrl, 'mcp:ada'))[0]?.status === 'cancelled');
    expect(gw.upstreamLog()).toEqual([]);
  });
});
