// Model input and requests that once broke the server: NUL characters where PostgreSQL's text
// cannot hold them, a Last-Event-ID beyond the chain's head, and a request body that never ends.
import { defineTool } from '@toolgate/core';
import { request as httpRequest } from 'node:http';
import { afterEach, expect, it, vi } from 'vitest';
import { createServerGate, toolgateHandler, type ServerGate } from '../../src/index.ts';
import { as, bearer, openFeed, serve, type Served } from '../support/http.ts';
import { describeLedgers } from '../support/ledgers.ts';

const charge = defineTool({
  name: 'charge',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer' } },
    required: ['amount_cents'],
  },
  execute: (input) => ({ charged: input.amount_cents }),
});
const session = { session: 's1', principal: 'alice' };

let cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describeLedgers('model input and requests with hostile bytes', (target) => {
  async function setup(
    handlerOptions: { bodyTimeoutMs?: number } = {},
  ): Promise<{ gate: ServerGate; served: Served; base: string }> {
    const ledger = await (await target.fresh()).open();
    const gate = createServerGate({ tools: [charge], ledger, recover: false });
    const served = await serve(
      toolgateHandler(gate, { authenticate: bearer, onError: vi.fn(), ...handlerOptions }),
    );
    cleanup.push(
      () => gate.close(),
      () => served.close(),
    );
    return { gate, served, base: `${served.origin}/api/toolgate` };
  }

  it('rejects a call id or tool name holding a NUL character as model input, with a reason, and stores nothing', async () => {
    const { gate } = await setup();
    const byId = await gate.propose(
      { id: 'c\u00001', name: 'charge', arguments: '{"amount_cents":1}' },
      session,
    );
    expect(byId).toMatchObject({
      status: 'rejected',
      reason: { code: 'invalid_shape', message: expect.stringContaining('NUL') },
    });
    const byName = await gate.propose(
      { id: 'c2', name: 'char\u0000ge', arguments: '{"amount_cents":1}' },
      session,
    );
    expect(byName).toMatchObject({
      id: 'c2',
      status: 'rejected',
      reason: { code: 'invalid_shape', message: expect.stringContaining('NUL') },
    });
    expect(await gate.get('c\u00001')).toBeUndefined();
    expect(await gate.settled('c\u00001')).toBeUndefined();
    expect(await gate.approve('c\u00001', { principal: 'alice', inputHash: '0'.repeat(64) })).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    // The gate goes on: the next call runs.
    expect(
      await gate.run({ id: 'c3', name: 'charge', arguments: '{"amount_cents":3}' }, session),
    ).toMatchObject({ status: 'committed' });
  });

  it('answers 400 for %00 in a path, not 500', async () => {
    const { base } = await setup();
    const approve = await fetch(`${base}/calls/c%001/approve`, {
      method: 'POST',
      headers: as('alice', { 'content-type': 'application/json' }),
      body: '{}',
    });
    expect(approve.status).toBe(400);
    expect(await approve.json()).toMatchObject({ error: { code: 'malformed' } });
    const calls = await fetch(`${base}/sessions/s%001/calls`, { headers: as('alice') });
    expect(calls.status).toBe(400);
  });

  it('refuses a Last-Event-ID beyond the head with 400 instead of skipping the events written up to it', async () => {
    const { gate, base } = await setup();
    await gate.run({ id: 'c1', name: 'charge', arguments: '{"amount_cents":1}' }, session);
    const head = (await gate.snapshot('s1', 'alice')).seq;
    const ahead = await fetch(`${base}/sessions/s1/events`, {
      headers: as('alice', { 'last-event-id': String(head + 5) }),
    });
    expect(ahead.status).toBe(400);
    expect(await ahead.json()).toMatchObject({
      error: { code: 'malformed', message: expect.stringContaining('Last-Event-ID') },
    });
    // At the head exactly is fine: the feed goes on from there.
    const feed = await openFeed(`${base}/sessions/s1/events`, { principal: 'alice', lastEventId: head });
    expect(feed.response.status).toBe(200);
    await gate.run({ id: 'c2', name: 'charge', arguments: '{"amount_cents":2}' }, session);
    await feed.until(() =>
      feed.moves().some((move) => move.record.id === 'c2' && move.record.status === 'committed'),
    );
    feed.close();
  });

  it('answers 408 to an authenticated body that never ends, within its deadline', async () => {
    const { served } = await setup({ bodyTimeoutMs: 300 });
    const { port } = new URL(served.origin);
    const answered = await new Promise<number | undefined>((resolve, reject) => {
      const request = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/toolgate/calls/c1/deny',
        headers: as('alice', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }),
      });
      request.on('response', (response) => {
        response.resume();
        resolve(response.statusCode);
        request.destroy();
      });
      request.on('error', reject);
      request.write('{"reason":');
      // …and nothing more, ever.
    });
    expect(answered).toBe(408);
  });
});
