import { defineTool, inputHash } from '@toolgate/core';
import { expect, it } from 'vitest';
import { createServerGate, type Ledger } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const STAFF = new Set(['alice', 'manager_1', 'manager_2', 'manager_3']);

function setup(ledger: Ledger, approvals = 2) {
  const runs: string[] = [];
  const wire = defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { iban: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['iban', 'amount_cents'],
      additionalProperties: false,
    },
    approvals,
    execute: (input) => {
      runs.push(`${input.iban}:${input.amount_cents}`);
      return { sent: input.amount_cents };
    },
  });
  const gate = createServerGate({
    tools: [wire],
    ledger,
    recover: false,
    canSee: (principal) => STAFF.has(principal),
    // Four eyes: the session's owner proposes, two managers approve.
    canApprove: (principal, call) => principal !== call.owner && principal.startsWith('manager_'),
  });
  return { gate, runs };
}

const propose = async (ledger: Ledger, approvals?: number) => {
  const parts = setup(ledger, approvals);
  const call = await parts.gate.propose(
    { id: 'w1', name: 'wire', arguments: { iban: 'DE02', amount_cents: 500_000 } },
    { session: 'chat_a', principal: 'alice' },
  );
  return { ...parts, call, hash: await inputHash(call.input) };
};

describeLedgers('approvals by a quorum', (target) => {
  it('runs only once two distinct approvers have approved the same input; the record shows who and how many are left', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, call, hash } = await propose(ledger);
    expect(call).toMatchObject({
      status: 'awaiting_approval',
      approval: { required: 2, approvedBy: [], left: 2 },
    });

    expect(await gate.approve('w1', { principal: 'manager_1', inputHash: hash })).toEqual({
      ok: true,
      left: 1,
    });
    const waiting = await gate.get('w1');
    expect(waiting?.status).toBe('awaiting_approval');
    expect(waiting?.approval).toMatchObject({
      required: 2,
      left: 1,
      approvedBy: [{ principal: 'manager_1' }],
    });
    expect(runs).toEqual([]);

    expect(await gate.approve('w1', { principal: 'manager_2', inputHash: hash })).toEqual({
      ok: true,
      left: 0,
    });
    const done = await gate.settled('w1');
    expect(done).toMatchObject({
      status: 'committed',
      approval: {
        required: 2,
        left: 0,
        approvedBy: [{ principal: 'manager_1' }, { principal: 'manager_2' }],
      },
    });
    expect(runs).toEqual(['DE02:500000']);

    const events = (await ledger.eventsAfter(0)).filter((event) => event.callId === 'w1');
    expect(events.filter((event) => event.reason?.code === 'approved').map((event) => event.actor)).toEqual([
      'manager_1',
      'manager_2',
    ]);
    expect(
      events.find((event) => event.from === 'awaiting_approval' && event.to === 'executing')?.actor,
    ).toBe('manager_2');
    expect(await ledger.verify()).toMatchObject({ ok: true });
    await gate.close();
  });

  it('answers one approver approving twice already_approved, audits it, and keeps waiting', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, hash } = await propose(ledger);
    expect(await gate.approve('w1', { principal: 'manager_1', inputHash: hash })).toEqual({
      ok: true,
      left: 1,
    });
    expect(await gate.approve('w1', { principal: 'manager_1', inputHash: hash })).toMatchObject({
      ok: false,
      code: 'already_approved',
    });
    expect((await gate.get('w1'))?.approval).toMatchObject({ left: 1 });
    expect(runs).toEqual([]);
    const refusals = (await ledger.eventsAfter(0)).filter(
      (event) => event.reason?.code === 'already_approved',
    );
    expect(refusals.map((event) => event.actor)).toEqual(['manager_1']);
    await gate.close();
  });

  it('ends with one denial, whoever approved before', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, hash } = await propose(ledger, 3);
    expect(await gate.approve('w1', { principal: 'manager_1', inputHash: hash })).toEqual({
      ok: true,
      left: 2,
    });
    expect(await gate.deny('w1', { principal: 'manager_2', reason: 'not this account' })).toEqual({
      ok: true,
    });
    expect(await gate.get('w1')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'approval_denied', message: 'not this account' },
    });
    expect(await gate.approve('w1', { principal: 'manager_3', inputHash: hash })).toMatchObject({
      ok: false,
      code: 'settled',
    });
    expect(runs).toEqual([]);
    await gate.close();
  });

  it('leaves the approvers to canApprove: the owner of the session may be kept out (four eyes)', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, hash } = await propose(ledger);
    expect(await gate.approve('w1', { principal: 'alice', inputHash: hash })).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
    expect((await gate.get('w1'))?.approval).toMatchObject({ left: 2 });
    expect(runs).toEqual([]);
    await gate.close();
  });

  it('two approvers approving at once run the call once', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, hash } = await propose(ledger);
    const decisions = await Promise.all(
      ['manager_1', 'manager_2'].map((principal) => gate.approve('w1', { principal, inputHash: hash })),
    );
    expect(decisions.map((decision) => decision.ok)).toEqual([true, true]);
    expect((await gate.settled('w1'))?.status).toBe('committed');
    expect(runs).toEqual(['DE02:500000']);
    await gate.close();
  });
});

it('refuses approvals that are not a whole number of approvers at definition', () => {
  const config = { name: 'wire', inputSchema: { type: 'object' } as const, execute: () => 1 };
  expect(() => defineTool({ ...config, approvals: 0 })).toThrow(
    'defineTool("wire"): `approvals` must be a whole number of approvers, 1 or more (got 0).',
  );
  expect(() => defineTool({ ...config, approvals: 1.5 })).toThrow('`approvals` must be a whole number');
  expect(defineTool({ ...config, approvals: 2 }).needsApproval).toBe(true);
  expect(defineTool({ ...config, approvals: 2, needsApproval: false }).needsApproval).toBe(false);
});
