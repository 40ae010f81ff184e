import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { join } from 'node:path';
import { sqliteLedger } from '@toolgate/server';
import { describe, expect, it } from 'vitest';
import { startGateway, testUpstream, scratch, textOf } from './support/gateway.ts';
import { PNG, TOOLS, WAV } from './support/upstream-tools.mjs';

const NEVER = { approval: 'never' } as const;

describe('what passes through the gateway unchanged', () => {
  it('lists every upstream tool with all its fields: title, description, annotations, schemas, icons, _meta', async () => {
    const dir = scratch();
    const gateway = await startGateway({ dir, config: { upstreams: { test: testUpstream(dir) } } });
    const { tools } = await gateway.client.listTools();
    // bad_schema cannot be checked, so it is not offered (see the refusals); everything else is, as sent.
    expect(tools).toEqual(TOOLS.filter((tool) => tool['name'] !== 'bad_schema'));
    expect(gateway.stderr()).toContain(
      'the tool "bad_schema" is not offered: its input schema does not compile',
    );
  });

  it('answers a result with every content type, structured content and _meta exactly as the upstream sent it', async () => {
    const dir = scratch();
    const gateway = await startGateway({
      dir,
      config: { upstreams: { test: testUpstream(dir) }, tools: { rich: NEVER } },
    });
    await gateway.client.listTools();
    const result = await gateway.client.callTool({
      name: 'rich',
      arguments: {},
      _meta: { 'toolgate/callId': 'rich-1' },
    });
    expect(result).toEqual({
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
      _meta: { 'example.com/trace': 'abc', 'toolgate/callId': 'rich-1', 'toolgate/status': 'committed' },
    });
  });

  it("passes an upstream's own isError result on as it is, and records the call failed / tool_error with the upstream's words", async () => {
    const dir = scratch();
    const gateway = await startGateway({
      dir,
      config: { upstreams: { test: testUpstream(dir) }, tools: { fail: NEVER }, principal: 'ada' },
    });
    const ask = () =>
      gateway.client.callTool({ name: 'fail', arguments: {}, _meta: { 'toolgate/callId': 'fail-1' } });
    const expected = {
      content: [{ type: 'text', text: 'the note is locked' }],
      isError: true,
      _meta: { 'toolgate/callId': 'fail-1', 'toolgate/status': 'failed', 'toolgate/reason': 'tool_error' },
    };
    expect(await ask()).toEqual(expected);
    // Asked again by its id, the call answers the same, and is not run again.
    expect(await ask()).toEqual(expected);
    await gateway.close();

    const ledger = await sqliteLedger({ path: join(dir, 'ledger.db') });
    try {
      const { calls } = await ledger.snapshot('mcp:ada');
      expect(calls.map((call) => [call.id, call.status, call.reason?.code])).toEqual([
        ['fail-1', 'failed', 'tool_error'],
      ]);
      expect(calls[0]?.reason?.message).toContain('the note is locked');
      const moves = await ledger.read((db) =>
        db
          .selectFrom('toolgate_events')
          .select(['to_status'])
          .where('call_id', '=', 'fail-1')
          .orderBy('seq')
          .execute(),
      );
      expect(moves.map((move) => move.to_status)).toEqual(['pending', 'validated', 'executing', 'failed']);
    } finally {
      await ledger.close();
    }
  });

  it("forwards the upstream's progress notifications to the client's progress token, before the result", async () => {
    const dir = scratch();
    const gateway = await startGateway({
      dir,
      config: { upstreams: { test: testUpstream(dir) }, tools: { progress: NEVER } },
    });
    // What reaches the client's transport, in order: the SDK's Client hands a notification to its
    // handler a microtask later than a response, so a progress read in the same chunk as the
    // result would not show in onprogress, though the gateway sent it first.
    const wire: Record<string, unknown>[] = [];
    const transport = gateway.client.transport;
    const deliver = transport?.onmessage;
    if (transport !== undefined)
      transport.onmessage = (message, extra) => (wire.push(message), deliver?.(message, extra));
    const result = await gateway.client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, {
      onprogress: () => undefined,
    });
    expect(textOf(result)).toBe('done in 3 steps');
    const progress = wire
      .filter((message) => message['method'] === 'notifications/progress')
      .map((message) => message['params']);
    expect(progress).toEqual(
      [1, 2, 3].map((step) => ({
        progressToken: expect.anything(),
        progress: step,
        total: 3,
        message: `step ${step} of 3`,
      })),
    );
    expect(wire.findIndex((message) => 'result' in message)).toBeGreaterThan(
      wire.findLastIndex((message) => message['method'] === 'notifications/progress'),
    );
  });

  it("follows the upstream's tools/list_changed: lists again, tells the client, and checks later calls against the new tools", async () => {
    const dir = scratch();
    const gateway = await startGateway({
      dir,
      config: { upstreams: { test: testUpstream(dir) }, tools: { add_tool: NEVER, late: NEVER } },
    });
    expect((await gateway.client.listTools()).tools.map((tool) => tool.name)).not.toContain('late');
    expect(gateway.stderr()).toContain('the config sets a policy for "late", which no upstream offers (yet)');
    const told = new Promise<void>((resolve) =>
      gateway.client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    await gateway.client.callTool({ name: 'add_tool', arguments: {} });
    await told;
    const late = (await gateway.client.listTools()).tools.find((tool) => tool.name === 'late');
    expect(late).toEqual({
      name: 'late',
      title: 'Late',
      description: 'Offered after add_tool.',
      inputSchema: {
        type: 'object',
        properties: { n: { type: 'integer' } },
        required: ['n'],
        additionalProperties: false,
      },
    });
    const wrong = await gateway.client.callTool({ name: 'late', arguments: { n: 'two' } });
    expect(wrong._meta).toMatchObject({
      'toolgate/status': 'rejected',
      'toolgate/reason': 'invalid_arguments',
    });
    expect(textOf(await gateway.client.callTool({ name: 'late', arguments: { n: 2 } }))).toBe('late 2');
    expect(gateway.upstreamLog()).toEqual(['late 2']);
  });
});
