import { defineTool, inputHash } from '@toolgate/core';
import { expect, it } from 'vitest';
import { createFakeClock } from '@toolgate/test-utils';
import { createServerGate, type Ledger, type ServerGate, type ServerGateOptions } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const transfer = (runs: string[]) =>
  defineTool({
    name: 'transfer',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['to', 'amount_cents'],
      additionalProperties: false,
    },
    needsApproval: true,
    execute: async (input) => {
      runs.push(`${input.to}:${input.amount_cents}`);
      return { sent: input.amount_cents };
    },
  });

const TTL = 60_000;
const args = { to: 'alice@example.com', amount_cents: 2000 };

async function setup(ledger: Ledger, options: Partial<ServerGateOptions> = {}) {
  const runs: string[] = [];
  const clock = createFakeClock(Date.now());
  const gate = createServerGate({
    tools: [transfer(runs)],
    ledger,
    recover: false,
    clock,
    approvalTtlMs: TTL,
    ...options,
  });
  const call = await gate.propose(
    { id: 't1', name: 'transfer', arguments: args },
    { session: 'chat_a', principal: 'alice' },
  );
  expect(call.status).toBe('awaiting_approval');
  return { gate, runs, clock, call, hash: await inputHash(call.input) };
}

/** The refusals the audit trail holds for a call: who was refused, and why. */
async function refusals(ledger: Ledger, id: string) {
  const events = await ledger.eventsAfter(0);
  return events
    .filter((event) => event.callId === id && event.from === event.to)
    .map((event) => `${event.actor}:${event.reason?.code}`);
}

const statusOf = async (gate: ServerGate, id: string) => (await gate.get(id))?.status;

describeLedgers(
  'approvals',
  (target) => {
    it('refuses a hash of other arguments as stale, audits it, and runs nothing', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs } = await setup(ledger);
      const forged = await inputHash({ ...args, amount_cents: 200_000 });
      expect(await gate.approve('t1', { principal: 'alice', inputHash: forged })).toMatchObject({
        ok: false,
        code: 'stale',
      });
      expect(await statusOf(gate, 't1')).toBe('awaiting_approval');
      expect(runs).toEqual([]);
      expect(await refusals(ledger, 't1')).toEqual(['alice:stale']);
      await gate.close();
    });

    it('answers another principal not_found, audits who asked, and runs nothing', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs, hash } = await setup(ledger);
      expect(await gate.approve('t1', { principal: 'mallory', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect(await gate.deny('t1', { principal: 'mallory' })).toMatchObject({ ok: false, code: 'not_found' });
      expect(await gate.cancel('t1', { principal: 'mallory' })).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect(await gate.approve('t1', { principal: '', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'forbidden',
      });
      expect(await statusOf(gate, 't1')).toBe('awaiting_approval');
      expect(runs).toEqual([]);
      expect(await refusals(ledger, 't1')).toEqual([
        'mallory:forbidden',
        'mallory:forbidden',
        'mallory:forbidden',
      ]);
      await gate.close();
    });

    it('refuses a principal who may see the session but not approve (forbidden)', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs, hash } = await setup(ledger, {
        canSee: (principal, session) => principal === session.owner || principal === 'support',
      });
      expect(await gate.approve('t1', { principal: 'support', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'forbidden',
      });
      expect(await gate.calls('chat_a', 'support')).toHaveLength(1);
      expect(runs).toEqual([]);
      expect(await refusals(ledger, 't1')).toEqual(['support:forbidden']);
      await gate.close();
    });

    it("does not let the owner of another session approve this session's call", async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs, hash } = await setup(ledger);
      const other = await gate.propose(
        { id: 'b1', name: 'transfer', arguments: args },
        { session: 'chat_b', principal: 'bob' },
      );
      expect(other.status).toBe('awaiting_approval');
      expect(await gate.approve('t1', { principal: 'bob', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect(await gate.calls('chat_a', 'bob')).toEqual([]);
      expect(runs).toEqual([]);
      await gate.close();
    });

    it('cancels an expired approval with approval_expired, and refuses the late approval as expired', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs, clock, hash } = await setup(ledger);
      clock.advance(TTL + 1);
      expect(await gate.approve('t1', { principal: 'alice', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'expired',
      });
      expect(await gate.get('t1')).toMatchObject({
        status: 'cancelled',
        reason: { code: 'approval_expired' },
      });
      expect(runs).toEqual([]);
      expect(await refusals(ledger, 't1')).toEqual(['alice:expired']);
      await gate.close();
    });

    it('cancels approvals that ran out in the recovery sweep, with nobody touching them', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, clock } = await setup(ledger);
      clock.advance(TTL);
      expect(await gate.recover()).toEqual({
        rerun: [],
        reconciling: [],
        held: [],
        interrupted: [],
        expired: ['t1'],
        reminded: [],
        escalated: [],
      });
      expect(await gate.get('t1')).toMatchObject({
        status: 'cancelled',
        reason: { code: 'approval_expired' },
      });
      await gate.close();
    });

    it('refuses an approval after a denial, and a replayed approval, as settled', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs, hash } = await setup(ledger);
      expect(await gate.deny('t1', { principal: 'alice', reason: 'not today' })).toEqual({ ok: true });
      expect(await gate.get('t1')).toMatchObject({
        status: 'cancelled',
        reason: { code: 'approval_denied', message: 'not today' },
      });
      expect(await gate.approve('t1', { principal: 'alice', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'settled',
      });

      const second = await gate.propose(
        { id: 't2', name: 'transfer', arguments: args },
        { session: 'chat_a', principal: 'alice' },
      );
      expect(await gate.approve('t2', { principal: 'alice', inputHash: hash })).toEqual({ ok: true });
      expect((await gate.settled('t2'))?.status).toBe('committed');
      expect(await gate.approve('t2', { principal: 'alice', inputHash: hash })).toMatchObject({
        ok: false,
        code: 'settled',
      });
      expect(runs).toEqual(['alice@example.com:2000']);
      expect(second.status).toBe('awaiting_approval');
      expect(await refusals(ledger, 't1')).toEqual(['alice:settled']);
      expect(await refusals(ledger, 't2')).toEqual(['alice:settled']);
      await gate.close();
    });

    it('lets exactly one of two approvals given at once win; the other is refused and audited', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, runs, hash } = await setup(ledger);
      const decisions = await Promise.all([
        gate.approve('t1', { principal: 'alice', inputHash: hash }),
        gate.approve('t1', { principal: 'alice', inputHash: hash }),
      ]);
      expect(decisions.filter((decision) => decision.ok)).toHaveLength(1);
      expect(decisions.find((decision) => !decision.ok)).toMatchObject({
        code: expect.stringMatching(/^(not_awaiting|settled)$/),
      });
      expect((await gate.settled('t1'))?.status).toBe('committed');
      expect(runs).toHaveLength(1);
      expect(await refusals(ledger, 't1')).toHaveLength(1);
      await gate.close();
    });

    it('lets exactly one of two gates on one ledger win the same approval', async () => {
      const store = await target.fresh();
      const ledger = await store.open();
      const { gate, runs, hash } = await setup(ledger);
      const otherRuns: string[] = [];
      const other = createServerGate({
        tools: [transfer(otherRuns)],
        ledger: await store.open(),
        recover: false,
      });
      const decisions = await Promise.all([
        gate.approve('t1', { principal: 'alice', inputHash: hash }),
        other.approve('t1', { principal: 'alice', inputHash: hash }),
      ]);
      expect(decisions.filter((decision) => decision.ok)).toHaveLength(1);
      expect((await gate.settled('t1'))?.status).toBe('committed');
      expect(runs.length + otherRuns.length).toBe(1);
      await Promise.all([gate.close(), other.close()]);
    });

    it('keeps a pending approval across closing and reopening the ledger, and runs it once approved', async () => {
      const store = await target.fresh();
      const first = await store.open();
      const { gate, hash } = await setup(first);
      await gate.close();
      await first.close();

      const runs: string[] = [];
      const reopened = createServerGate({
        tools: [transfer(runs)],
        ledger: await store.open(),
        recover: false,
      });
      const waiting = await reopened.calls('chat_a', 'alice');
      expect(waiting.map((call) => [call.id, call.status])).toEqual([['t1', 'awaiting_approval']]);
      expect(await reopened.approve('t1', { principal: 'alice', inputHash: hash })).toEqual({ ok: true });
      expect((await reopened.settled('t1'))?.status).toBe('committed');
      expect(runs).toEqual(['alice@example.com:2000']);
      expect(await reopened.verify()).toMatchObject({ ok: true });
      await reopened.close();
    });
  },
  { shared: true },
);
