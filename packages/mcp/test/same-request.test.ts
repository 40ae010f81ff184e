import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startGateway, testUpstream, scratch, textOf, waitFor } from './support/gateway.ts';
import { approveOnPage, pageCalls } from './support/page-api.ts';

// What Claude Desktop and Cursor send: the model writes the arguments, and nothing else, so a
// request never names its call (no `_meta["toolgate/callId"]`).
const note = { path: 'notes/today.md', text: 'buy milk' };

async function gateway(approvalWaitMs: number) {
  const dir = scratch();
  return startGateway({
    dir,
    config: { upstreams: { test: testUpstream(dir) }, approvalWaitMs, principal: 'ada' },
  });
}

const waitingCalls = async (approvalUrl: string) =>
  (await pageCalls(approvalUrl, 'mcp:ada')).filter((call) => call.status === 'awaiting_approval');

describe('a client that cannot name its calls asks the same thing again', () => {
  it('joins an identical request sent while the first waits for a person: one call, one run, both answered its outcome', async () => {
    const gw = await gateway(60_000);
    const first = gw.client.callTool({ name: 'write_note', arguments: note });
    const [waiting] = await waitFor(async () => {
      const calls = await waitingCalls(gw.approvalUrl);
      return calls.length > 0 && calls;
    });
    const second = gw.client.callTool({ name: 'write_note', arguments: { ...note } });
    // Other arguments are another call.
    const other = gw.client.callTool({ name: 'write_note', arguments: { ...note, text: 'buy eggs' } });
    await waitFor(async () => (await waitingCalls(gw.approvalUrl)).length === 2);

    expect((await approveOnPage(gw.approvalUrl, waiting?.id ?? '', waiting?.input)).status).toBe(200);
    const [a, b] = await Promise.all([first, second]);
    expect(textOf(a)).toBe('wrote notes/today.md');
    expect(b).toEqual(a);
    expect(a._meta?.['toolgate/callId']).toBe(waiting?.id);
    expect(gw.upstreamLog()).toEqual(['write_note notes/today.md buy milk']);

    const calls = await pageCalls(gw.approvalUrl, 'mcp:ada');
    expect(calls.map((call) => [call.status, call.input])).toEqual(
      expect.arrayContaining([
        ['committed', note],
        ['awaiting_approval', { ...note, text: 'buy eggs' }],
      ]),
    );
    expect(calls).toHaveLength(2);
    void other.catch(() => undefined);
  });

  it('answers a model told the call waits, asking again with the same arguments, with that call: run once, never twice', async () => {
    const gw = await gateway(200);
    const told = await gw.client.callTool({ name: 'write_note', arguments: note });
    expect(told._meta).toMatchObject({ 'toolgate/status': 'awaiting_approval' });
    // The model cannot set _meta in these clients: the answer does not ask it to.
    expect(textOf(told)).not.toContain('_meta');
    expect(textOf(told)).toContain('call "write_note" again with exactly the same arguments');
    const id = told._meta?.['toolgate/callId'];

    // Asked again before anyone decided: still the one call, still waiting.
    const again = await gw.client.callTool({ name: 'write_note', arguments: note });
    expect(again._meta).toMatchObject({ 'toolgate/callId': id, 'toolgate/status': 'awaiting_approval' });

    const [shown] = await waitingCalls(gw.approvalUrl);
    expect((await approveOnPage(gw.approvalUrl, String(id), shown?.input)).status).toBe(200);
    const outcome = await gw.client.callTool({ name: 'write_note', arguments: note });
    expect(outcome._meta).toMatchObject({ 'toolgate/callId': id, 'toolgate/status': 'committed' });
    expect(textOf(outcome)).toBe('wrote notes/today.md');
    expect(gw.upstreamLog()).toEqual(['write_note notes/today.md buy milk']);

    // Its outcome answered, the same request once more is a new call, for a person to decide.
    const next = await gw.client.callTool({ name: 'write_note', arguments: note });
    expect(next._meta).toMatchObject({ 'toolgate/status': 'awaiting_approval' });
    expect(next._meta?.['toolgate/callId']).not.toBe(id);
    expect(await pageCalls(gw.approvalUrl, 'mcp:ada')).toHaveLength(2);
    expect(gw.upstreamLog()).toHaveLength(1);
  });

  it("asks the client's person once: an identical request joins the call the open dialog asks about", async () => {
    const dir = scratch();
    const dialogs: ((answer: ElicitResult) => void)[] = [];
    const gw = await startGateway({
      dir,
      config: { upstreams: { test: testUpstream(dir) }, principal: 'ada' },
      elicit: () => new Promise((resolve) => dialogs.push(resolve)),
    });
    const first = gw.client.callTool({ name: 'write_note', arguments: note });
    await waitFor(() => dialogs.length === 1);
    const second = gw.client.callTool({ name: 'write_note', arguments: note });
    // A third request, with other arguments, asks about its own call, after the second was taken.
    const other = gw.client.callTool({ name: 'write_note', arguments: { ...note, text: 'buy eggs' } });
    await waitFor(() => dialogs.length === 2);
    dialogs[0]?.({ action: 'accept', content: {} });
    const [a, b] = await Promise.all([first, second]);
    expect(textOf(a)).toBe('wrote notes/today.md');
    expect(b).toEqual(a);
    dialogs[1]?.({ action: 'accept', content: {} });
    expect(textOf(await other)).toBe('wrote notes/today.md');
    expect(gw.upstreamLog()).toEqual([
      'write_note notes/today.md buy milk',
      'write_note notes/today.md buy eggs',
    ]);
    expect(dialogs).toHaveLength(2);
  });

  it("keeps two client sessions apart: another client's identical request is a call of its own", async () => {
    const dir = scratch();
    const gw = await startGateway({
      dir,
      http: true,
      config: { upstreams: { test: testUpstream(dir) }, approvalWaitMs: 200, principal: 'ada' },
    });
    const other = new Client({ name: 'other-window', version: '1.0.0' });
    const url = /Streamable HTTP\) at (\S+)/.exec(gw.stderr())?.[1] ?? '';
    await other.connect(new StreamableHTTPClientTransport(new URL(url)));
    onTestFinished(() => other.close());

    const mine = await gw.client.callTool({ name: 'write_note', arguments: note });
    const theirs = await other.callTool({ name: 'write_note', arguments: note });
    expect(mine._meta).toMatchObject({ 'toolgate/status': 'awaiting_approval' });
    expect(theirs._meta).toMatchObject({ 'toolgate/status': 'awaiting_approval' });
    expect(theirs._meta?.['toolgate/callId']).not.toBe(mine._meta?.['toolgate/callId']);
    // Each session's own retry still joins its own call.
    const again = await other.callTool({ name: 'write_note', arguments: note });
    expect(again._meta?.['toolgate/callId']).toBe(theirs._meta?.['toolgate/callId']);
    expect(await waitingCalls(gw.approvalUrl)).toHaveLength(2);
  });
});
