import { sqliteLedger } from '@toolgate/server';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startGateway, testUpstream, scratch, textOf, waitFor } from './support/gateway.ts';
import { approveOnPage, pageApi, pageCalls } from './support/page-api.ts';

const note = { path: 'notes/today.md', text: 'buy milk' };

async function gatewayWithNotes(extra: Record<string, unknown> = {}) {
  const dir = scratch();
  const gateway = await startGateway({
    dir,
    config: { upstreams: { test: testUpstream(dir) }, approvalWaitMs: 300, principal: 'ada', ...extra },
  });
  return gateway;
}

describe('a person approves, bound to the exact input', () => {
  it('answers a call that needs approval with where to approve, runs nothing, and after approval on the page answers its outcome to the same call id, once', async () => {
    const gateway = await gatewayWithNotes();
    const ask = () =>
      gateway.client.callTool({
        name: 'write_note',
        arguments: note,
        _meta: { 'toolgate/callId': 'note-1' },
      });

    const waiting = await ask();
    expect(waiting.isError).toBe(true);
    expect(textOf(waiting)).toContain("has not run: it waits for a person's approval");
    expect(textOf(waiting)).toContain(new URL(gateway.approvalUrl).origin);
    // The model reads this text: the page's token is not in it.
    expect(textOf(waiting)).not.toContain('token=');
    expect(waiting._meta).toMatchObject({
      'toolgate/callId': 'note-1',
      'toolgate/status': 'awaiting_approval',
    });
    expect(gateway.upstreamLog()).toEqual([]);

    const [shown] = await pageCalls(gateway.approvalUrl, 'mcp:ada');
    expect(shown).toMatchObject({
      id: 'note-1',
      name: 'write_note',
      status: 'awaiting_approval',
      input: note,
    });
    expect((await approveOnPage(gateway.approvalUrl, 'note-1', shown?.input)).status).toBe(200);

    const outcome = await ask();
    expect(outcome.isError).toBeUndefined();
    expect(textOf(outcome)).toBe('wrote notes/today.md');
    expect(await ask()).toEqual(outcome);
    expect(gateway.upstreamLog()).toEqual(['write_note notes/today.md buy milk']);
  });

  it("needs approval for a tool the upstream annotates read-only: annotations are the upstream's word", async () => {
    const gateway = await gatewayWithNotes();
    const { tools } = await gateway.client.listTools();
    expect(tools.find((tool) => tool.name === 'write_note')?.annotations).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
    });
    const result = await gateway.client.callTool({ name: 'write_note', arguments: note });
    expect(result._meta?.['toolgate/status']).toBe('awaiting_approval');
    expect(gateway.upstreamLog()).toEqual([]);
  });

  it('refuses an approval bound to another input than the call holds, and runs nothing', async () => {
    const gateway = await gatewayWithNotes();
    await gateway.client.callTool({
      name: 'write_note',
      arguments: note,
      _meta: { 'toolgate/callId': 'note-2' },
    });
    const response = await approveOnPage(gateway.approvalUrl, 'note-2', { ...note, text: 'buy cream' });
    expect(response.status).toBe(409);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('stale');
    const [call] = await pageCalls(gateway.approvalUrl, 'mcp:ada');
    expect(call?.status).toBe('awaiting_approval');
    expect(gateway.upstreamLog()).toEqual([]);
  });

  it('answers a denied call as cancelled with approval_denied, and never runs it', async () => {
    const gateway = await gatewayWithNotes();
    await gateway.client.callTool({
      name: 'write_note',
      arguments: note,
      _meta: { 'toolgate/callId': 'note-3' },
    });
    expect(
      (await pageApi(gateway.approvalUrl, '/calls/note-3/deny', { body: { reason: 'not today' } })).status,
    ).toBe(200);
    const result = await gateway.client.callTool({
      name: 'write_note',
      arguments: note,
      _meta: { 'toolgate/callId': 'note-3' },
    });
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({
      'toolgate/status': 'cancelled',
      'toolgate/reason': 'approval_denied',
    });
    expect(gateway.upstreamLog()).toEqual([]);
  });

  it('answers the call as soon as the person approves it on the page while the client waits', async () => {
    const gateway = await gatewayWithNotes({ approvalWaitMs: 20_000 });
    const answer = gateway.client.callTool({
      name: 'write_note',
      arguments: note,
      _meta: { 'toolgate/callId': 'note-4' },
    });
    let shown: { id: string; input?: unknown } | undefined;
    while (shown === undefined) [shown] = await pageCalls(gateway.approvalUrl, 'mcp:ada');
    await approveOnPage(gateway.approvalUrl, shown.id, shown.input);
    expect(textOf(await answer)).toBe('wrote notes/today.md');
    expect(gateway.upstreamLog()).toHaveLength(1);
  });

  it('asks through MCP elicitation when the client supports it, showing the exact input and its hash; accept runs it once', async () => {
    const asked: string[] = [];
    const dir = scratch();
    const gateway = await startGateway({
      dir,
      config: { upstreams: { test: testUpstream(dir) }, principal: 'ada' },
      elicit: (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: {} };
      },
    });
    const result = await gateway.client.callTool({
      name: 'write_note',
      arguments: { ...note, copies: 2 },
      _meta: { 'toolgate/callId': 'note-5' },
    });
    expect(textOf(result)).toBe('wrote notes/today.md');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('"write_note"');
    expect(asked[0]).toContain(JSON.stringify({ ...note, copies: 2 }, null, 2));
    expect(asked[0]).toMatch(/Input SHA-256 \(RFC 8785 JSON\): [0-9a-f]{64}/);
    expect(gateway.upstreamLog()).toEqual([
      'write_note notes/today.md buy milk',
      'write_note notes/today.md buy milk',
    ]);
  });

  it('a person declining in the client cancels the call with approval_denied; dismissing leaves it waiting on the page', async () => {
    let action: 'decline' | 'cancel' = 'decline';
    const dir = scratch();
    const gateway = await startGateway({
      dir,
      config: { upstreams: { test: testUpstream(dir) }, principal: 'ada' },
      elicit: () => ({ action }),
    });
    const declined = await gateway.client.callTool({ name: 'write_note', arguments: note });
    expect(declined._meta).toMatchObject({
      'toolgate/status': 'cancelled',
      'toolgate/reason': 'approval_denied',
    });
    action = 'cancel';
    const dismissed = await gateway.client.callTool({ name: 'write_note', arguments: note });
    expect(dismissed._meta).toMatchObject({ 'toolgate/status': 'awaiting_approval' });
    expect(gateway.upstreamLog()).toEqual([]);
  });

  it('keeps the audit trail in the ledger file: the proposal by the client, the approval by the person on the page, the run; and it verifies', async () => {
    const gateway = await gatewayWithNotes();
    await gateway.client.callTool({
      name: 'write_note',
      arguments: note,
      _meta: { 'toolgate/callId': 'note-6' },
    });
    const [shown] = await pageCalls(gateway.approvalUrl, 'mcp:ada');
    await approveOnPage(gateway.approvalUrl, 'note-6', shown?.input);
    await gateway.client.callTool({
      name: 'write_note',
      arguments: note,
      _meta: { 'toolgate/callId': 'note-6' },
    });
    await gateway.close();

    const ledger = await sqliteLedger({ path: join(gateway.dir, 'ledger.db') });
    try {
      expect(await ledger.verify()).toMatchObject({ ok: true });
      const events = await ledger.read((db) =>
        db
          .selectFrom('toolgate_events')
          .select(['call_id', 'from_status', 'to_status', 'actor'])
          .where('call_id', '=', 'note-6')
          .orderBy('seq')
          .execute(),
      );
      expect(events.map((event) => [event.from_status, event.to_status, event.actor])).toEqual([
        // The model's request, through the client that sent it; the person's decision on the page.
        [null, 'pending', 'ada via toolgate-test'],
        ['pending', 'validated', 'ada via toolgate-test'],
        ['validated', 'awaiting_approval', 'ada via toolgate-test'],
        ['awaiting_approval', 'executing', 'ada'],
        ['executing', 'committed', expect.any(String)],
      ]);
    } finally {
      await ledger.close();
    }
  });

  it('records each approver by the page link they used: one of their own per approver the config names', async () => {
    const gateway = await gatewayWithNotes({ approvers: ['bob', 'carol'] });
    // Printed right after the principal's own link, which the gateway was awaited for.
    const printed = await waitFor(() => {
      const found = [...gateway.stderr().matchAll(/approve calls as (\S+) at (\S+)/g)];
      return found.length === 2 && found;
    });
    const links = Object.fromEntries(printed.map(([, name, url]) => [name, url]));
    expect(Object.keys(links).sort()).toEqual(['bob', 'carol']);
    expect(new Set([gateway.approvalUrl, links['bob'], links['carol']]).size).toBe(3);

    for (const [id, text] of [
      ['note-7', 'buy bread'],
      ['note-8', 'buy jam'],
    ] as const)
      await gateway.client.callTool({
        name: 'write_note',
        arguments: { ...note, text },
        _meta: { 'toolgate/callId': id },
      });
    const shown = await pageCalls(links['bob'] ?? '', 'mcp:ada');
    const input = (id: string) => shown.find((call) => call.id === id)?.input;
    expect((await approveOnPage(links['bob'] ?? '', 'note-7', input('note-7'))).status).toBe(200);
    const denied = await pageApi(links['carol'] ?? '', '/calls/note-8/deny', { body: { reason: 'no jam' } });
    expect(denied.status).toBe(200);
    await gateway.client.callTool({
      name: 'write_note',
      arguments: { ...note, text: 'buy bread' },
      _meta: { 'toolgate/callId': 'note-7' },
    });
    await gateway.close();

    const ledger = await sqliteLedger({ path: join(gateway.dir, 'ledger.db') });
    try {
      const decisions = await ledger.read((db) =>
        db
          .selectFrom('toolgate_events')
          .select(['call_id', 'to_status', 'actor'])
          .where('from_status', '=', 'awaiting_approval')
          .orderBy('seq')
          .execute(),
      );
      expect(decisions.map((event) => [event.call_id, event.to_status, event.actor])).toEqual([
        ['note-7', 'executing', 'bob'],
        ['note-8', 'cancelled', 'carol'],
      ]);
    } finally {
      await ledger.close();
    }
  });
});
