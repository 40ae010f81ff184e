import { inputHash } from '@toolgate/core';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createServerGate, toolgateHandler, type Ledger, type ServerGate } from '../../src/index.ts';
import { bearer, post, serve } from '../support/http.ts';
import { describeLedgers } from '../support/ledgers.ts';
import { startPaymentApi, type PaymentApi } from '../support/payment-api.ts';
import { chargeTool } from '../support/payment-tool.ts';

// A committed charge is undone by its tool's compensate (a refund), run as a call of its own,
// `<id>:compensate`, that the original links to. Only a committed call, once, by someone
// canApprove allows, approved first when the tool needs approval, audited.

const session = { session: 'shop_1', principal: 'alice' };

let api: PaymentApi;
beforeEach(async () => {
  api = await startPaymentApi();
});
afterEach(() => api.close());

const gates: ServerGate[] = [];
afterEach(async () => {
  await Promise.all(gates.splice(0).map((gate) => gate.close()));
});

function gateOver(ledger: Ledger, tools = [chargeTool(api.url)]) {
  const gate = createServerGate({
    tools,
    ledger,
    recover: false,
    canSee: (principal, seen) => principal === seen.owner || principal === 'mallory',
    onError: () => undefined,
  });
  gates.push(gate);
  return gate;
}

const buy = (gate: ServerGate, order: string, amount_cents = 1250) =>
  gate.run({ id: `call_${order}`, name: 'charge', arguments: { order, amount_cents } }, session);

async function notes(ledger: Ledger, id: string) {
  return (await ledger.eventsAfter(0, { limit: 1000 }))
    .filter((event) => event.callId === id && event.reason?.code === 'compensation')
    .map((event) => `${event.actor}: ${event.reason?.message ?? ''}`);
}

describeLedgers('compensate: a committed call undone by its own call', (target) => {
  it('refunds a committed charge as `<id>:compensate`, once, and the charge links to what it returned', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger);
    const charge = await buy(gate, 'o_1');
    expect(charge).toMatchObject({ status: 'committed', output: { charge: 'ch_1' } });
    expect(await gate.compensate(charge.id, { principal: 'alice', reason: 'returned' })).toEqual({
      ok: true,
    });
    const refund = await gate.settled(`${charge.id}:compensate`);
    expect(refund).toMatchObject({
      status: 'committed',
      name: 'charge',
      compensates: charge.id,
      input: { call: charge.id, output: { charge: 'ch_1', amount_cents: 1250 }, reason: 'returned' },
      output: { refund: 're_1', amount_cents: 1250 },
    });
    await expect.poll(async () => (await gate.get(charge.id))?.compensation?.status).toBe('committed');
    expect(await gate.get(charge.id)).toMatchObject({
      status: 'committed',
      output: { charge: 'ch_1' },
      compensation: {
        id: `${charge.id}:compensate`,
        by: 'alice',
        reason: 'returned',
        status: 'committed',
        output: { refund: 're_1', amount_cents: 1250 },
      },
    });
    expect(api.refunds).toEqual([
      { id: 're_1', key: 'charge:o_1:compensate', charge: 'ch_1', amount_cents: 1250 },
    ]);
    expect(api.charges[0]?.refunded).toBe(true);
    expect(await notes(ledger, charge.id)).toEqual([
      `alice: "alice" asked to undo this call (returned): compensation call "${charge.id}:compensate", running`,
      `alice: its compensation "${charge.id}:compensate" committed: the call was undone`,
    ]);
    expect((await gate.calls('shop_1', 'alice')).map((call) => call.id)).toEqual([
      charge.id,
      `${charge.id}:compensate`,
    ]);
    const reply = await gate.toolResult(charge.id, 'openai-chat');
    expect(reply.content).toContain('It was undone afterwards (asked by alice: returned)');
    // Once.
    expect(await gate.compensate(charge.id, { principal: 'alice' })).toMatchObject({
      ok: false,
      code: 'already_compensated',
    });
    expect(api.refunds).toHaveLength(1);
    expect(await ledger.verify()).toMatchObject({ ok: true });
  });

  it('of two requests at once, one makes the compensation; one refund', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger);
    const other = gateOver(ledger);
    const charge = await buy(gate, 'o_2');
    const decisions = await Promise.all([
      gate.compensate(charge.id, { principal: 'alice' }),
      other.compensate(charge.id, { principal: 'alice' }),
      gate.compensate(charge.id, { principal: 'alice' }),
    ]);
    expect(decisions.filter((decision) => decision.ok)).toHaveLength(1);
    for (const decision of decisions.filter((candidate) => !candidate.ok))
      expect(decision).toMatchObject({ code: 'already_compensated' });
    expect(await gate.settled(`${charge.id}:compensate`)).toMatchObject({ status: 'committed' });
    expect(api.refunds).toHaveLength(1);
  });

  it('refuses a call that did not commit, and a tool with no compensate', async () => {
    const ledger = await (await target.fresh()).open();
    const { compensate: _dropped, ...noUndo } = chargeTool(api.url);
    const gate = gateOver(ledger, [chargeTool(api.url), { ...noUndo, name: 'charge_final' }]);
    const declined = await buy(gate, 'o_3', 0);
    expect(declined.status).toBe('failed');
    expect(await gate.compensate(declined.id, { principal: 'alice' })).toMatchObject({
      ok: false,
      code: 'not_committed',
    });
    const final = await gate.run(
      { id: 'call_final', name: 'charge_final', arguments: { order: 'o_4', amount_cents: 10 } },
      session,
    );
    expect(final.status).toBe('committed');
    expect(await gate.compensate(final.id, { principal: 'alice' })).toMatchObject({
      ok: false,
      code: 'no_compensate',
    });
    expect(await gate.compensate('nope', { principal: 'alice' })).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    expect(await gate.compensate(final.id, { principal: 'mallory' })).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
    expect(api.refunds).toEqual([]);
    const refusals = (await ledger.eventsAfter(0, { limit: 1000 }))
      .filter((event) => event.from === event.to)
      .map((event) => `${event.callId} ${event.actor} ${event.reason?.code ?? ''}`);
    expect(refusals).toEqual([
      `${declined.id} alice not_committed`,
      `${final.id} alice no_compensate`,
      `${final.id} mallory forbidden`,
    ]);
  });

  it('waits for approval when the tool needs it; a denial leaves the charge as it was, compensated once', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger, [
      chargeTool(api.url, { needsApproval: (input) => input.amount_cents > 1000 }),
    ]);
    const small = await buy(gate, 'o_5', 500);
    const large = await gate.propose(
      { id: 'call_o_6', name: 'charge', arguments: { order: 'o_6', amount_cents: 5000 } },
      session,
    );
    await gate.approve(large.id, { principal: 'alice', inputHash: await inputHash(large.input) });
    expect(await gate.settled(large.id)).toMatchObject({ status: 'committed' });
    // Asked of the input the charge ran with: the small one is refunded at once, the large one waits.
    expect(await gate.compensate(small.id, { principal: 'alice' })).toEqual({ ok: true });
    expect(await gate.settled(`${small.id}:compensate`)).toMatchObject({ status: 'committed' });
    expect(await gate.compensate(large.id, { principal: 'alice', reason: 'fraud' })).toEqual({ ok: true });
    const waiting = await gate.get(`${large.id}:compensate`);
    expect(waiting).toMatchObject({ status: 'awaiting_approval', compensates: large.id });
    expect(await gate.get(large.id)).toMatchObject({ compensation: { status: 'awaiting_approval' } });
    // Its input is the gate's: an approver cannot change what is undone.
    expect(
      await gate.approve(waiting!.id, {
        principal: 'alice',
        inputHash: await inputHash(waiting!.input),
        input: { call: large.id, output: { charge: 'ch_1', amount_cents: 1 } },
      }),
    ).toMatchObject({ ok: false, code: 'invalid_edit' });
    expect(await gate.deny(waiting!.id, { principal: 'alice', reason: 'not fraud after all' })).toEqual({
      ok: true,
    });
    await expect.poll(async () => (await gate.get(large.id))?.compensation?.status).toBe('cancelled');
    expect(await gate.get(large.id)).toMatchObject({
      status: 'committed',
      compensation: { failure: { code: 'approval_denied' } },
    });
    expect(await gate.compensate(large.id, { principal: 'alice' })).toMatchObject({
      code: 'already_compensated',
    });
    expect(api.refunds.map((refund) => refund.charge)).toEqual([
      small.output && (small.output as { charge: string }).charge,
    ]);
  });

  it('a refund the provider refuses ends the compensation failed, and the charge says so', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger);
    const charge = await buy(gate, 'o_7');
    api.behave('refund', 'error');
    await gate.compensate(charge.id, { principal: 'alice' });
    expect(await gate.settled(`${charge.id}:compensate`)).toMatchObject({
      status: 'failed',
      reason: { code: 'tool_error' },
    });
    await expect.poll(async () => (await gate.get(charge.id))?.compensation?.status).toBe('failed');
    expect((await gate.toolResult(charge.id, 'openai-chat')).content).not.toContain('undone');
  });

  it('a model cannot propose a call id kept for compensations', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger);
    const charge = await buy(gate, 'o_8');
    for (const id of [`${charge.id}:compensate`, 'fresh:compensate']) {
      const call = await gate.propose(
        { id, name: 'charge', arguments: { order: 'o_8', amount_cents: 1250 } },
        session,
      );
      expect(call).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });
    }
    expect(await gate.get('fresh:compensate')).toBeUndefined();
    expect(api.refunds).toEqual([]);
    expect(api.charges).toHaveLength(1);
  });

  it('over HTTP: POST /calls/:id/compensate', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = gateOver(ledger);
    const charge = await buy(gate, 'o_9');
    const served = await serve(toolgateHandler(gate, { authenticate: bearer }));
    try {
      const url = `${served.origin}/api/toolgate/calls/${charge.id}/compensate`;
      expect(await post(url, 'alice', { reason: 5 })).toMatchObject({ status: 400 });
      expect(await post(url, 'alice', { reason: 'wrong size' })).toMatchObject({
        status: 200,
        body: { ok: true },
      });
      expect(await post(url, 'alice', {})).toMatchObject({
        status: 409,
        body: { error: { code: 'already_compensated' } },
      });
      expect(await gate.settled(`${charge.id}:compensate`)).toMatchObject({ status: 'committed' });
    } finally {
      await served.close();
    }
  });
});
