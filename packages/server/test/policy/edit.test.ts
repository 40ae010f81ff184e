import { defineTool, inputHash } from '@toolgate/core';
import { expect, it } from 'vitest';
import { createServerGate, type Budget, type Ledger } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

function setup(ledger: Ledger, { approvals = 1, budgets = [] as Budget[] } = {}) {
  const runs: string[] = [];
  const transfer = defineTool({
    name: 'transfer',
    inputSchema: {
      type: 'object',
      properties: {
        to: { type: 'string' },
        amount_cents: { type: 'integer', minimum: 1 },
        memo: { type: 'string' },
      },
      required: ['to', 'amount_cents'],
    },
    needsApproval: true,
    approvals,
    authorize: (input) => input.to !== 'mallory' || 'transfers to mallory are blocked',
    execute: (input) => {
      runs.push(`${input.to}:${input.amount_cents}`);
      return { sent: input.amount_cents, to: input.to };
    },
  });
  const gate = createServerGate({
    tools: [transfer],
    ledger,
    recover: false,
    budgets,
    canSee: () => true,
    canApprove: (principal) => principal === 'alice' || principal.startsWith('manager_'),
  });
  return { gate, runs };
}

const proposed = { to: 'bob', amount_cents: 250_000 };

async function waiting(ledger: Ledger, options?: Parameters<typeof setup>[1]) {
  const parts = setup(ledger, options);
  const call = await parts.gate.propose(
    { id: 't1', name: 'transfer', arguments: proposed },
    { session: 'chat_a', principal: 'alice' },
  );
  expect(call.status).toBe('awaiting_approval');
  return { ...parts, hash: await inputHash(call.input) };
}

describeLedgers('an edit on approve', (target) => {
  it('runs the edited input; the record keeps what the model proposed and who changed what; the model is told', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, hash } = await waiting(ledger);
    expect(
      await gate.approve('t1', {
        principal: 'alice',
        inputHash: hash,
        input: { to: 'bob', amount_cents: 200_000 },
      }),
    ).toEqual({ ok: true });
    const done = await gate.settled('t1');
    expect(done).toMatchObject({
      status: 'committed',
      input: { to: 'bob', amount_cents: 200_000 },
      output: { sent: 200_000 },
      edit: { proposed, by: 'alice', changes: [{ path: '/amount_cents', from: 250_000, to: 200_000 }] },
    });
    expect(runs).toEqual(['bob:200000']);
    const text = (await gate.toolResult('t1', 'openai-chat')).content;
    expect(text).toContain(
      'A person (alice) changed the input of "transfer" before approving it; it ran with their values, not yours:\n- /amount_cents: 250000 → 200000',
    );
    expect(text).toContain('Do not call it again with the original values.');
    const edited = (await ledger.eventsAfter(0)).filter((event) => event.reason?.code === 'edited');
    expect(edited).toMatchObject([{ actor: 'alice', callId: 't1' }]);
    expect(edited[0]?.reason?.message).toBe(
      '"alice" changed the input before approving: /amount_cents: 250000 → 200000',
    );
    expect(await ledger.verify()).toMatchObject({ ok: true });
    await gate.close();
  });

  it('refuses an edit the schema refuses with invalid_edit and its issues; the call keeps waiting', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, hash } = await waiting(ledger);
    const decision = await gate.approve('t1', {
      principal: 'alice',
      inputHash: hash,
      input: { to: 'bob', amount_cents: -5 },
    });
    expect(decision).toMatchObject({ ok: false, code: 'invalid_edit', issues: [{ path: '/amount_cents' }] });
    expect(await gate.get('t1')).toMatchObject({ status: 'awaiting_approval', input: proposed });
    expect(runs).toEqual([]);
    // The same person may then approve what was proposed.
    expect(await gate.approve('t1', { principal: 'alice', inputHash: hash })).toEqual({ ok: true });
    expect((await gate.settled('t1'))?.input).toEqual(proposed);
    expect(
      (await ledger.eventsAfter(0))
        .filter((event) => event.reason?.code === 'invalid_edit')
        .map((event) => event.actor),
    ).toEqual(['alice']);
    await gate.close();
  });

  it('refuses an edit that authorize refuses, that adds a field, or that names another tool', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, hash } = await waiting(ledger);
    expect(
      await gate.approve('t1', {
        principal: 'alice',
        inputHash: hash,
        input: { to: 'mallory', amount_cents: 100 },
      }),
    ).toMatchObject({
      ok: false,
      code: 'invalid_edit',
      message: 'the app does not authorize the edited call: transfers to mallory are blocked',
    });
    expect(
      await gate.approve('t1', { principal: 'alice', inputHash: hash, input: { ...proposed, memo: 'rent' } }),
    ).toMatchObject({
      ok: false,
      code: 'invalid_edit',
      message:
        'the edit adds /memo, which the model did not propose; an edit may only change the values it proposed',
    });
    expect(
      await gate.approve('t1', { principal: 'alice', inputHash: hash, input: proposed, name: 'wire' }),
    ).toMatchObject({
      ok: false,
      code: 'invalid_edit',
      message: 'an edit cannot change which tool runs: this call is "transfer", the edit names "wire"',
    });
    expect((await gate.get('t1'))?.status).toBe('awaiting_approval');
    expect(runs).toEqual([]);
    await gate.close();
  });

  it('decides an edit against the budgets again: an edit that does not fit is refused, one that fits runs', async () => {
    const ledger = await (await target.fresh()).open();
    const budget: Budget = {
      name: 'daily',
      per: 'principal',
      windowMs: 86_400_000,
      max: 300_000,
      measure: (input) => (input as { amount_cents: number }).amount_cents,
    };
    const { gate, runs, hash } = await waiting(ledger, { budgets: [budget] });
    const over = await gate.approve('t1', {
      principal: 'alice',
      inputHash: hash,
      input: { to: 'bob', amount_cents: 400_000 },
    });
    expect(over).toMatchObject({ ok: false, code: 'invalid_edit' });
    expect(over.ok ? '' : over.message).toBe(
      'the edited input does not fit a budget: budget "daily" allows 300000 in any 1 day for this principal; 0 is used and 300000 is left, and this call would take 400000',
    );
    expect(
      await gate.approve('t1', {
        principal: 'alice',
        inputHash: hash,
        input: { to: 'bob', amount_cents: 290_000 },
      }),
    ).toEqual({ ok: true });
    expect((await gate.settled('t1'))?.status).toBe('committed');
    // The budget counts what ran: 290,000 of 300,000.
    const next = await gate.propose(
      { id: 't2', name: 'transfer', arguments: { to: 'bob', amount_cents: 20_000 } },
      { session: 'chat_a', principal: 'alice' },
    );
    expect(next.reason?.message).toContain('290000 is used and 10000 is left');
    expect(runs).toEqual(['bob:290000']);
    await gate.close();
  });

  it('on a tool that needs two approvers, an edit is its editor approval of the new input; the other approves that input', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, hash } = await waiting(ledger, { approvals: 2 });
    expect(await gate.approve('t1', { principal: 'manager_1', inputHash: hash })).toEqual({
      ok: true,
      left: 1,
    });
    expect(
      await gate.approve('t1', {
        principal: 'manager_2',
        inputHash: hash,
        input: { to: 'bob', amount_cents: 100_000 },
      }),
    ).toEqual({ ok: true, left: 1 });
    const edited = await gate.get('t1');
    expect(edited).toMatchObject({
      status: 'awaiting_approval',
      input: { to: 'bob', amount_cents: 100_000 },
      approval: { left: 1, approvedBy: [{ principal: 'manager_2' }] },
      edit: { by: 'manager_2' },
    });
    // manager_1 approved the old input: the old hash is stale now.
    expect(await gate.approve('t1', { principal: 'manager_1', inputHash: hash })).toMatchObject({
      ok: false,
      code: 'stale',
    });
    expect(runs).toEqual([]);
    expect(
      await gate.approve('t1', { principal: 'manager_1', inputHash: await inputHash(edited?.input) }),
    ).toEqual({ ok: true, left: 0 });
    expect(await gate.settled('t1')).toMatchObject({
      status: 'committed',
      input: { amount_cents: 100_000 },
      edit: { proposed, by: 'manager_2' },
    });
    expect(runs).toEqual(['bob:100000']);
    await gate.close();
  });
});
