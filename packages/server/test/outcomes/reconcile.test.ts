import { heldText, type ToolCallRecord } from '@toolgate/core';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createFakeClock } from '@toolgate/test-utils';
import { createServerGate, type Ledger, type ServerGate } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';
import { startPaymentApi, type PaymentApi } from '../support/payment-api.ts';
import { chargeTool } from '../support/payment-tool.ts';

// A charge whose run throws (the connection to the provider was cut, the provider answered 500)
// is not taken at its word: the tool's reconcile looks the charge up by its key, and the call ends
// as the provider's records say. Every answer reconcile can give, and every way it can fail.

const session = { session: 'shop_1', principal: 'alice' };
const order = (id: string, amount_cents = 1250) => ({
  id: `call_${id}`,
  name: 'charge',
  arguments: { order: id, amount_cents },
});

let api: PaymentApi;
beforeEach(async () => {
  api = await startPaymentApi();
});
afterEach(() => api.close());

const gates: ServerGate[] = [];
afterEach(async () => {
  await Promise.all(gates.splice(0).map((gate) => gate.close()));
});

function gateOver(
  ledger: Ledger,
  tool = chargeTool(api.url),
  extra: Parameters<typeof createServerGate>[0] | object = {},
) {
  const gate = createServerGate({
    tools: [tool],
    ledger,
    recover: false,
    onError: () => undefined,
    ...extra,
  });
  gates.push(gate);
  return gate;
}

const posts = () =>
  api.requests.filter((request) => request.method === 'POST' && request.path === '/charges');
const lookups = () => api.requests.filter((request) => request.method === 'GET');

async function events(ledger: Ledger, id: string) {
  return (await ledger.eventsAfter(0, { limit: 1000 }))
    .filter((event) => event.callId === id)
    .map((event) => `${event.from ?? 'null'}>${event.to}${event.reason ? `:${event.reason.code}` : ''}`);
}

describeLedgers('reconcile, when a run throws', (target) => {
  it('commits a charge the provider recorded before the connection was cut, once, on its evidence', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger);
    api.behave('charge', 'record-then-drop');
    const call = await gate.run(order('o_1'), session);
    expect(call).toMatchObject({
      status: 'committed',
      output: { charge: 'ch_1', amount_cents: 1250 },
      evidence: { source: 'downstream' },
    });
    expect(api.charges).toHaveLength(1);
    expect(posts()).toEqual([{ method: 'POST', path: '/charges', key: 'charge:o_1' }]);
    expect(lookups()).toHaveLength(1);
    // The model is told it happened, on whose word, and not to do it again.
    const reply = await gate.toolResult(call.id, 'openai-chat');
    expect(reply.content).toContain('settled on the evidence of the system it called');
    expect(reply.content).toContain('{"charge":"ch_1","amount_cents":1250}');
    expect(reply.content).toContain('Do not call "charge" again');
    expect(await events(ledger, call.id)).toEqual([
      'null>pending',
      'pending>validated',
      'validated>executing',
      'executing>committed',
    ]);
    expect(await ledger.verify()).toMatchObject({ ok: true });
  });

  it('runs a charge the provider never received again once, with the same key, and charges once', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger);
    api.behave('charge', 'drop', 1);
    const call = await gate.run(order('o_2'), session);
    expect(call).toMatchObject({ status: 'committed', output: { charge: 'ch_1' }, attempt: 2 });
    expect(call.evidence).toBeUndefined();
    expect(api.charges).toHaveLength(1);
    expect(posts().map((request) => request.key)).toEqual(['charge:o_2', 'charge:o_2']);
    expect(await events(ledger, call.id)).toEqual([
      'null>pending',
      'pending>validated',
      'validated>executing',
      'executing>executing:run_again',
      'executing>committed',
    ]);
  });

  it('ends failed / tool_error when the run again fails too and the provider still has no charge', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger);
    api.behave('charge', 'drop');
    const call = await gate.run(order('o_3'), session);
    expect(call).toMatchObject({ status: 'failed', reason: { code: 'tool_error' }, attempt: 2 });
    expect(call.reason?.message).toContain('reconcile confirms its effect never happened');
    expect(posts()).toHaveLength(2);
    expect(lookups()).toHaveLength(2);
    expect(api.charges).toEqual([]);
  });

  it('does not ask reconcile about an error the tool marked notExecuted (a declined card)', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger);
    const call = await gate.run(order('o_4', 0), session);
    expect(call).toMatchObject({ status: 'failed', reason: { code: 'tool_error' } });
    expect(call.reason?.message).toContain('the provider refused the charge (402)');
    expect(lookups()).toEqual([]);
  });

  it("ends failed / interrupted when the provider can't tell, by default", async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger);
    api.behave('charge', 'error');
    api.behave('lookup', 'error');
    const call = await gate.run(order('o_5'), session);
    expect(call).toMatchObject({ status: 'failed', reason: { code: 'interrupted' } });
    expect(call.reason?.message).toContain('the provider answered 500');
    expect(call.reason?.message).toContain('reconcile could not tell');
    expect(call.reason?.message).toContain('it may or may not have taken effect');
    expect(posts()).toHaveLength(1);
  });

  it('holds the call for a person with onUnknown "hold": still executing, never run again by itself', async () => {
    const clock = createFakeClock(Date.now());
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger, chargeTool(api.url, { onUnknown: 'hold' }), { clock, leaseMs: 1000 });
    api.behave('charge', 'error');
    api.behave('lookup', 'error');
    const proposed = await gate.propose(order('o_6'), session);
    const held = (await gate.stopped(proposed.id)) as ToolCallRecord;
    expect(held).toMatchObject({
      status: 'executing',
      doubt: { message: expect.stringContaining('reconcile could not tell') },
    });
    expect(heldText(held)).toContain('outcome of the call to "charge" is unknown');
    expect(heldText(held)).toContain('A person will check');
    const row = await ledger.db
      .selectFrom('toolgate_calls')
      .selectAll()
      .where('id', '=', proposed.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'executing', lease_owner: null, lease_expires_at: null });
    // However long it waits and however often recovery sweeps, nothing runs it again.
    api.behave('charge', 'answer');
    api.behave('lookup', 'answer');
    for (let sweep = 0; sweep < 5; sweep += 1) {
      clock.advance(10_000);
      expect(await gate.recover()).toMatchObject({ rerun: [], reconciling: [], held: [], interrupted: [] });
    }
    expect(posts()).toHaveLength(1);
    expect(lookups()).toHaveLength(1);
    expect(await gate.get(proposed.id)).toMatchObject({ status: 'executing', doubt: expect.anything() });
    // Cancelling would tell the model nothing happened: refused.
    expect(await gate.cancel(proposed.id, { principal: 'alice' })).toMatchObject({
      ok: false,
      code: 'in_doubt',
    });
    expect(await events(ledger, proposed.id)).toEqual([
      'null>pending',
      'pending>validated',
      'validated>executing',
      'executing>executing:held',
      'executing>executing:in_doubt',
    ]);
  });

  for (const [what, reconcile] of [
    ['throws', () => Promise.reject(new Error('the lookup API is down'))],
    [
      'answers an unknown outcome',
      () => Promise.resolve({ outcome: 'comitted', output: { charge: 'ch_1', amount_cents: 1 } }),
    ],
    ['answers committed without an output', () => Promise.resolve({ outcome: 'committed' })],
    ['answers null', () => Promise.resolve(null)],
    [
      'answers an output its outputSchema refuses',
      () => Promise.resolve({ outcome: 'committed', output: { charge: 'refund_1' } }),
    ],
  ] as const) {
    it(`fails closed when reconcile ${what}: interrupted, or held with onUnknown "hold", never committed`, async () => {
      const ledger = await (await target.fresh()).open();
      for (const onUnknown of ['interrupt', 'hold'] as const) {
        const gate = gateOver(ledger, chargeTool(api.url, { onUnknown, reconcile: reconcile as never }));
        api.behave('charge', 'error', 1);
        const proposed = await gate.propose(order(`o_${onUnknown}`), session);
        const call = await gate.stopped(proposed.id);
        if (onUnknown === 'interrupt')
          expect(call).toMatchObject({ status: 'failed', reason: { code: 'interrupted' } });
        else expect(call).toMatchObject({ status: 'executing', doubt: expect.anything() });
        expect(call?.output).toBeUndefined();
        const said = call?.status === 'failed' ? call.reason.message : call?.doubt?.message;
        if (what === 'throws') expect(said).toContain('reconcile threw: the lookup API is down');
        if (what === 'answers an unknown outcome') expect(said).toContain('unknown outcome "comitted"');
        if (what === 'answers an output its outputSchema refuses')
          expect(said).toContain('does not match the output schema');
        await gate.close();
      }
      expect(api.charges).toEqual([]);
    });
  }

  it("gives up on a reconcile that does not answer within the tool's timeoutMs", async () => {
    const clock = createFakeClock(Date.now());
    const ledger = await (await target.fresh()).open();
    let signal: AbortSignal | undefined;
    const gate = gateOver(
      ledger,
      chargeTool(api.url, {
        onUnknown: 'hold',
        timeoutMs: 5000,
        reconcile: (ctx) => {
          signal = ctx.signal;
          return new Promise(() => undefined);
        },
      }),
      { clock, leaseMs: 60_000 },
    );
    api.behave('charge', 'error', 1);
    const proposed = await gate.propose(order('o_7'), session);
    await expect.poll(() => signal).toBeDefined();
    expect((await gate.get(proposed.id))?.doubt).toBeUndefined();
    clock.advance(5000);
    const held = await gate.stopped(proposed.id);
    expect(held?.doubt?.message).toContain('reconcile did not answer within 5000 ms');
    expect(signal?.aborted).toBe(true);
  });
});
