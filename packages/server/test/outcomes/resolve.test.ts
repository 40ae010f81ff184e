import { afterEach, beforeEach, expect, it } from 'vitest';
import { createServerGate, toolgateHandler, type Ledger, type ServerGate } from '../../src/index.ts';
import { bearer, post, serve } from '../support/http.ts';
import { describeLedgers } from '../support/ledgers.ts';
import { startPaymentApi, type PaymentApi } from '../support/payment-api.ts';
import { chargeTool } from '../support/payment-tool.ts';

// A call held in doubt waits for a person who checks the provider and says what happened. Only
// people canApprove allows may; only a held call; one answer wins; the output they give must fit
// the tool's schema; and the audit trail names them and their note.

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

/** A gate where ops_1 (and the owner) may settle calls, and a call of order `id` held in doubt. */
async function held(ledger: Ledger, id: string) {
  const gate = createServerGate({
    tools: [chargeTool(api.url, { onUnknown: 'hold' })],
    ledger,
    recover: false,
    canSee: (principal, seen) =>
      principal === seen.owner || principal.startsWith('ops_') || principal === 'mallory',
    canApprove: (principal, call) => principal === call.owner || principal.startsWith('ops_'),
    onError: () => undefined,
  });
  gates.push(gate);
  api.behave('charge', 'error', 1);
  api.behave('lookup', 'error', 1);
  const call = await gate.propose(
    { id: `call_${id}`, name: 'charge', arguments: { order: id, amount_cents: 900 } },
    session,
  );
  await expect.poll(async () => (await gate.get(call.id))?.doubt).toBeDefined();
  return { gate, id: call.id };
}

const charges = () =>
  api.requests.filter((request) => request.method === 'POST' && request.path === '/charges');

async function trail(ledger: Ledger, id: string) {
  return (await ledger.eventsAfter(0, { limit: 1000 }))
    .filter((event) => event.callId === id)
    .slice(3)
    .map((event) => ({
      to: event.to,
      actor: event.actor,
      code: event.reason?.code,
      message: event.reason?.message,
    }));
}

describeLedgers('resolve: a person settles a call held in doubt', (target) => {
  it('committed, with the output they found: the record carries who and their note, the model is told', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, id } = await held(ledger, 'o_1');
    expect(
      await gate.resolve(id, {
        principal: 'ops_1',
        outcome: 'committed',
        output: { charge: 'ch_77', amount_cents: 900 },
        note: 'ch_77 is in the dashboard',
      }),
    ).toEqual({ ok: true });
    const call = await gate.settled(id);
    expect(call).toMatchObject({
      status: 'committed',
      output: { charge: 'ch_77', amount_cents: 900 },
      evidence: { source: 'person', by: 'ops_1', note: 'ch_77 is in the dashboard' },
    });
    expect(call?.doubt).toBeUndefined();
    expect(charges()).toHaveLength(1);
    expect(await trail(ledger, id)).toEqual([
      {
        to: 'executing',
        actor: 'toolgate:reconcile',
        code: 'held',
        message: expect.stringContaining('outcome unknown'),
      },
      {
        to: 'executing',
        actor: 'ops_1',
        code: 'resolved',
        message: '"ops_1" checked and settled it: its effect happened (ch_77 is in the dashboard)',
      },
      { to: 'committed', actor: 'ops_1', code: undefined, message: undefined },
    ]);
    const reply = await gate.toolResult(id, 'anthropic');
    expect(JSON.stringify(reply)).toContain('a person (ops_1) checked and settled it as done');
    expect(await ledger.verify()).toMatchObject({ ok: true });
  });

  it('not_executed: runs again once, with the same key, and charges once', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, id } = await held(ledger, 'o_2');
    expect(
      await gate.resolve(id, { principal: 'alice', outcome: 'not_executed', note: 'no charge' }),
    ).toEqual({ ok: true });
    expect(await gate.settled(id)).toMatchObject({
      status: 'committed',
      output: { charge: 'ch_1' },
      attempt: 2,
    });
    expect(charges().map((request) => request.key)).toEqual(['charge:o_2', 'charge:o_2']);
    expect(api.charges).toHaveLength(1);
  });

  it('refuses a principal canApprove does not allow (audited), and one who may not see the call', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, id } = await held(ledger, 'o_3');
    expect(await gate.resolve(id, { principal: 'mallory', outcome: 'not_executed' })).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
    expect(await gate.resolve(id, { principal: 'eve', outcome: 'not_executed' })).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    expect(await gate.get(id)).toMatchObject({ status: 'executing', doubt: expect.anything() });
    expect((await trail(ledger, id)).slice(1)).toEqual([
      { to: 'executing', actor: 'mallory', code: 'forbidden', message: '"mallory" may not settle this call' },
      { to: 'executing', actor: 'eve', code: 'forbidden', message: expect.stringContaining('may not see') },
    ]);
    expect(charges()).toHaveLength(1);
  });

  it('refuses a call that is not held: running, committed, unknown', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, id } = await held(ledger, 'o_4');
    await gate.resolve(id, {
      principal: 'alice',
      outcome: 'committed',
      output: { charge: 'ch_9', amount_cents: 900 },
    });
    expect(await gate.resolve(id, { principal: 'alice', outcome: 'not_executed' })).toMatchObject({
      ok: false,
      code: 'settled',
    });
    api.behave('charge', 'hang', 1);
    const running = await gate.propose(
      { id: 'call_run', name: 'charge', arguments: { order: 'o_5', amount_cents: 5 } },
      session,
    );
    expect(
      await gate.resolve(running.id, {
        principal: 'alice',
        outcome: 'committed',
        output: { charge: 'ch_1', amount_cents: 5 },
      }),
    ).toMatchObject({
      ok: false,
      code: 'not_in_doubt',
    });
    expect(await gate.resolve('nope', { principal: 'alice', outcome: 'not_executed' })).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    expect(await gate.cancel(running.id, { principal: 'alice' })).toEqual({ ok: true });
  });

  it('of two at once, one wins: the call runs again once', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, id } = await held(ledger, 'o_6');
    // Another app server on the same ledger: its own keeper, its own queue of moves.
    const other = createServerGate({
      tools: [chargeTool(api.url, { onUnknown: 'hold' })],
      ledger,
      recover: false,
      onError: () => undefined,
    });
    gates.push(other);
    const decisions = await Promise.all([
      gate.resolve(id, { principal: 'alice', outcome: 'not_executed' }),
      other.resolve(id, { principal: 'alice', outcome: 'not_executed' }),
      gate.resolve(id, {
        principal: 'alice',
        outcome: 'committed',
        output: { charge: 'ch_5', amount_cents: 900 },
      }),
    ]);
    expect(decisions.filter((decision) => decision.ok)).toHaveLength(1);
    for (const decision of decisions.filter((candidate) => !candidate.ok))
      expect(decision).toMatchObject({ ok: false, code: expect.stringMatching(/^(not_in_doubt|settled)$/) });
    const call = await gate.settled(id);
    expect(call?.status).toBe('committed');
    // Settled once: on the person's word (nothing charged), or run again once (one charge).
    const ranAgain = call?.evidence === undefined;
    expect(call).toMatchObject(ranAgain ? { attempt: 2 } : { evidence: { by: 'alice' } });
    expect(api.charges).toHaveLength(ranAgain ? 1 : 0);
    expect(charges()).toHaveLength(ranAgain ? 2 : 1);
  });

  it("refuses an output the tool's outputSchema refuses, and the call stays held", async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, id } = await held(ledger, 'o_7');
    const decision = await gate.resolve(id, {
      principal: 'alice',
      outcome: 'committed',
      output: { charge: 'oops' },
    });
    expect(decision).toMatchObject({
      ok: false,
      code: 'invalid_output',
      issues: expect.arrayContaining([expect.objectContaining({ path: '/charge' })]),
    });
    expect(await gate.get(id)).toMatchObject({ status: 'executing', doubt: expect.anything() });
    expect((await trail(ledger, id)).at(-1)).toMatchObject({ actor: 'alice', code: 'invalid_output' });
  });

  it('over HTTP: POST /calls/:id/resolve, with malformed bodies refused', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, id } = await held(ledger, 'o_8');
    const served = await serve(toolgateHandler(gate, { authenticate: bearer }));
    try {
      const url = `${served.origin}/api/toolgate/calls/${id}/resolve`;
      expect(await post(url, 'alice', { outcome: 'maybe' })).toMatchObject({
        status: 400,
        body: { error: { code: 'malformed' } },
      });
      expect(await post(url, 'alice', { outcome: 'not_executed', output: 1 })).toMatchObject({ status: 400 });
      expect(await post(url, 'alice', { outcome: 'committed', note: 7 })).toMatchObject({ status: 400 });
      expect(await post(url, undefined, { outcome: 'not_executed' })).toMatchObject({ status: 401 });
      expect(await post(url, 'mallory', { outcome: 'not_executed' })).toMatchObject({
        status: 403,
        body: { error: { code: 'forbidden' } },
      });
      expect(await post(url, 'alice', { outcome: 'committed', output: { charge: 'x' } })).toMatchObject({
        status: 409,
        body: { error: { code: 'invalid_output', issues: expect.any(Array) } },
      });
      expect(
        await post(url, 'ops_2', {
          outcome: 'committed',
          output: { charge: 'ch_3', amount_cents: 900 },
          note: 'found it',
        }),
      ).toMatchObject({
        status: 200,
        body: { ok: true },
      });
      expect(await post(url, 'ops_2', { outcome: 'not_executed' })).toMatchObject({
        status: 409,
        body: { error: { code: 'settled' } },
      });
      expect(await gate.get(id)).toMatchObject({
        status: 'committed',
        evidence: { by: 'ops_2', note: 'found it' },
      });
    } finally {
      await served.close();
    }
  });
});
