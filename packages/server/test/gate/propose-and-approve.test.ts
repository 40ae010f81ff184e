import { defineTool, inputHash } from '@toolgate/core';
import { expect, it } from 'vitest';
import { createServerGate } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const charge = defineTool({
  name: 'charge',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 }, currency: { enum: ['USD', 'EUR'] } },
    required: ['amount_cents', 'currency'],
    additionalProperties: false,
  },
  needsApproval: (input) => input.amount_cents > 5000,
  execute: async (input) => ({ charged: input.amount_cents }),
});

describeLedgers('server gate smoke', (target) => {
  it('commits a valid call and rejects a bad one', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = createServerGate({ tools: [charge], ledger, recover: false });
    const ok = await gate.run(
      { id: 'c1', name: 'charge', arguments: '{"amount_cents":100,"currency":"USD"}' },
      { session: 's1', principal: 'alice' },
    );
    expect(ok.status).toBe('committed');
    expect(ok.output).toEqual({ charged: 100 });
    const bad = await gate.run(
      { id: 'c2', name: 'charge', arguments: '{"amount_cents":"12.50","currency":"USD"}' },
      { session: 's1', principal: 'alice' },
    );
    expect(bad.status).toBe('rejected');
    expect(bad.reason?.code).toBe('invalid_arguments');
    const events = await ledger.eventsAfter(0);
    expect(events.map((e) => `${e.callId}:${e.from}->${e.to}`)).toEqual([
      'c1:null->pending',
      'c1:pending->validated',
      'c1:validated->executing',
      'c1:executing->committed',
      'c2:null->pending',
      'c2:pending->rejected',
    ]);
    expect(await gate.verify()).toMatchObject({ ok: true });
    const again = await gate.propose(
      { id: 'c1', name: 'charge', arguments: '{"amount_cents":100,"currency":"USD"}' },
      { session: 's1', principal: 'alice' },
    );
    expect(again.status).toBe('committed');
    const conflict = await gate.propose(
      { id: 'c1', name: 'charge', arguments: '{"amount_cents":999,"currency":"USD"}' },
      { session: 's1', principal: 'alice' },
    );
    expect(conflict).toMatchObject({ status: 'rejected', reason: { code: 'id_conflict' } });
    expect((await gate.get('c1'))?.status).toBe('committed');
    await gate.close();
  });

  it('takes the same call id with equal arguments in another key order, or as an object, for the same call', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = createServerGate({ tools: [charge], ledger, recover: false });
    const first = await gate.run(
      { id: 'k1', name: 'charge', arguments: '{"amount_cents":100,"currency":"USD"}' },
      { session: 's1', principal: 'alice' },
    );
    expect(first.status).toBe('committed');
    const reordered = await gate.propose(
      { id: 'k1', name: 'charge', arguments: '{ "currency": "USD", "amount_cents": 100 }' },
      { session: 's1', principal: 'alice' },
    );
    expect(reordered).toMatchObject({ status: 'committed', output: { charged: 100 } });
    const asObject = await gate.propose(
      { id: 'k1', name: 'charge', arguments: { currency: 'USD', amount_cents: 100 } },
      { session: 's1', principal: 'alice' },
    );
    expect(asObject).toMatchObject({ status: 'committed', output: { charged: 100 } });
    const other = await gate.propose(
      { id: 'k1', name: 'charge', arguments: '{"currency":"USD","amount_cents":101}' },
      { session: 's1', principal: 'alice' },
    );
    expect(other).toMatchObject({ status: 'rejected', reason: { code: 'id_conflict' } });
    const refusals = (await ledger.eventsAfter(0)).filter((e) => e.reason?.code === 'id_conflict');
    expect(refusals).toHaveLength(1);
    await gate.close();
  });

  it('runs an approved call once, bound to the input hash', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = createServerGate({ tools: [charge], ledger, recover: false });
    const call = await gate.propose(
      { id: 'a1', name: 'charge', arguments: { amount_cents: 9000, currency: 'EUR' } },
      { session: 's1', principal: 'alice' },
    );
    expect(call.status).toBe('awaiting_approval');
    expect(
      await gate.approve('a1', {
        principal: 'alice',
        inputHash: await inputHash({ amount_cents: 9001, currency: 'EUR' }),
      }),
    ).toMatchObject({ ok: false, code: 'stale' });
    expect(
      await gate.approve('a1', { principal: 'mallory', inputHash: await inputHash(call.input) }),
    ).toMatchObject({ ok: false, code: 'not_found' });
    expect(await gate.approve('a1', { principal: 'alice', inputHash: await inputHash(call.input) })).toEqual({
      ok: true,
    });
    expect(
      await gate.approve('a1', { principal: 'alice', inputHash: await inputHash(call.input) }),
    ).toMatchObject({ ok: false });
    const done = await gate.settled('a1');
    expect(done?.status).toBe('committed');
    const calls = await gate.calls('s1', 'alice');
    expect(calls.map((c) => c.status)).toEqual(['committed']);
    expect(await gate.calls('s1', 'mallory')).toEqual([]);
    expect(await gate.verify()).toMatchObject({ ok: true });
    await gate.close();
  });
});
