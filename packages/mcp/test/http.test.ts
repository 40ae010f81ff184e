import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { startGateway, testUpstream, scratch, textOf, UPSTREAM, waitFor } from './support/gateway.ts';
import { approveOnPage, pageCalls } from './support/page-api.ts';
import { PNG } from './support/upstream-tools.mjs';

const NEVER = { approval: 'never' } as const;
const note = { path: 'notes/today.md', text: 'buy milk' };

/** The test upstream serving Streamable HTTP on a port of its own. */
async function httpUpstream(dir: string, port = 0): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [UPSTREAM, '--http', String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, UPSTREAM_LOG: `${dir}/upstream.log` },
  });
  const line = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the HTTP upstream exited (${code})`)));
    createInterface({ input: child.stdout }).once('line', resolve);
  });
  const { listening } = JSON.parse(line) as { listening: number };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${listening}/mcp`,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('Streamable HTTP to the client', () => {
  it('lists, calls, waits for approval and answers the outcome to the same call id, run once', async () => {
    const dir = scratch();
    const gw = await startGateway({
      dir,
      http: true,
      config: {
        upstreams: { test: testUpstream(dir) },
        tools: { rich: NEVER },
        principal: 'ada',
        approvalWaitMs: 200,
      },
    });
    expect((await gw.client.listTools()).tools.map((tool) => tool.name)).toContain('write_note');
    const rich = await gw.client.callTool({ name: 'rich', arguments: {} });
    expect(rich.content).toContainEqual({ type: 'image', data: PNG, mimeType: 'image/png' });

    const ask = () =>
      gw.client.callTool({ name: 'write_note', arguments: note, _meta: { 'toolgate/callId': 'http-1' } });
    expect((await ask())._meta).toMatchObject({ 'toolgate/status': 'awaiting_approval' });
    const shown = (await pageCalls(gw.approvalUrl, 'mcp:ada')).find((call) => call.id === 'http-1');
    expect((await approveOnPage(gw.approvalUrl, 'http-1', shown?.input)).status).toBe(200);
    expect(textOf(await ask())).toBe('wrote notes/today.md');
    expect(textOf(await ask())).toBe('wrote notes/today.md');
    expect(gw.upstreamLog()).toEqual(['write_note notes/today.md buy milk']);
  });

  it('asks through elicitation on the request stream, and forwards progress', async () => {
    const dir = scratch();
    const gw = await startGateway({
      dir,
      http: true,
      config: { upstreams: { test: testUpstream(dir) }, tools: { progress: NEVER } },
      elicit: () => ({ action: 'accept', content: {} }),
    });
    expect(textOf(await gw.client.callTool({ name: 'write_note', arguments: note }))).toBe(
      'wrote notes/today.md',
    );
    const seen: unknown[] = [];
    await gw.client.callTool({ name: 'progress', arguments: { steps: 2 } }, undefined, {
      onprogress: (update) => seen.push(update),
    });
    expect(seen).toHaveLength(2);
  });
});

describe('a Streamable HTTP upstream', () => {
  it('is listed and called through the gateway like a spawned one', async () => {
    const dir = scratch();
    const upstream = await httpUpstream(dir);
    try {
      const gw = await startGateway({
        dir,
        config: { upstreams: { remote: { url: upstream.url } }, tools: { write_note: NEVER } },
      });
      expect((await gw.client.listTools()).tools.find((tool) => tool.name === 'rich')?.title).toBe(
        'Every kind of content',
      );
      const ask = () =>
        gw.client.callTool({ name: 'write_note', arguments: note, _meta: { 'toolgate/callId': 'remote-1' } });
      expect(textOf(await ask())).toBe('wrote notes/today.md');
      expect(textOf(await ask())).toBe('wrote notes/today.md');
      expect(gw.upstreamLog()).toHaveLength(1);
    } finally {
      await upstream.stop();
    }
  });
});

describe('several upstreams', () => {
  it('names each tool <upstream>__<tool>, and routes each call to its own upstream', async () => {
    const dir = scratch();
    const gw = await startGateway({
      dir,
      config: {
        upstreams: { a: testUpstream(dir), b: testUpstream(dir) },
        tools: { a__echo: NEVER, b__echo: NEVER },
      },
    });
    const names = (await gw.client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('a__echo');
    expect(names).toContain('b__write_note');
    expect(textOf(await gw.client.callTool({ name: 'b__echo', arguments: { text: 'hi' } }))).toBe('echo: hi');
    expect((await gw.client.callTool({ name: 'echo', arguments: { text: 'hi' } }))._meta).toMatchObject({
      'toolgate/reason': 'unknown_tool',
    });
  });
});

describe('a Streamable HTTP upstream that restarts', () => {
  it('fails the call it could not take with a clear answer, reconnects, and serves the next one', async () => {
    const dir = scratch();
    let upstream = await httpUpstream(dir);
    const port = new URL(upstream.url).port;
    try {
      const gw = await startGateway({
        dir,
        config: { upstreams: { remote: { url: upstream.url } }, tools: { echo: NEVER }, principal: 'ada' },
      });
      expect(textOf(await gw.client.callTool({ name: 'echo', arguments: { text: 'one' } }))).toBe(
        'echo: one',
      );
      await upstream.stop();
      upstream = await httpUpstream(dir, Number(port));
      const lost = await gw.client.callTool({ name: 'echo', arguments: { text: 'two' } });
      expect(lost._meta).toMatchObject({ 'toolgate/status': 'failed', 'toolgate/reason': 'tool_error' });
      expect(textOf(lost)).toContain('the upstream "remote" could not be reached');
      await waitFor(() => gw.stderr().includes('[remote] connected again'));
      expect(textOf(await gw.client.callTool({ name: 'echo', arguments: { text: 'three' } }))).toBe(
        'echo: three',
      );
    } finally {
      await upstream.stop();
    }
  });
});
