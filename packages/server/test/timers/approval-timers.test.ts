import { defineTool, inputHash, type Escalation } from '@toolgate/core';
import { createFakeClock, errorLog } from '@toolgate/test-utils';
import { expect, it } from 'vitest';
import { createServerGate, type Ledger, type ServerGateOptions } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

type Wire = { iban: string; amount_cents: number };

const SECOND = 1000;
const WIRE = { id: 'w1', name: 'wire', arguments: { iban: 'DE02', amount_cents: 500_000 } };

function setup(
  ledger: Ledger,
  {
    escalate = [{ afterMs: 2 * SECOND, approvers: ['director_1'] }],
    ...options
  }: { escalate?: Escalation<Wire>[] } & Partial<ServerGateOptions> = {},
) {
  const clock = createFakeClock();
  const runs: number[] = [];
  const wire = defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { iban: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['iban', 'amount_cents'],
      additionalProperties: false,
    },
    approvers: () => ['manager_1'],
    remindAfterMs: SECOND,
    escalate,
    approvalTtlMs: 5 * SECOND,
    execute: (input) => {
      runs.push(input.amount_cents);
      return { sent: input.amount_cents };
    },
  });
  const gate = createServerGate({ tools: [wire], ledger, clock, recover: false, ...options });
  return { gate, clock, runs };
}

/** The notes and moves the timers wrote about w1, in order. */
async function timerEvents(ledger: Ledger) {
  return (await ledger.eventsAfter(0))
    .filter((event) => event.callId === 'w1' && event.actor === 'toolgate:timers')
    .map((event) => ({ to: event.to, code: event.reason?.code, message: event.reason?.message }));
}

async function timerRows(ledger: Ledger) {
  return ledger.db
    .selectFrom('toolgate_timers')
    .select(['kind', 'step', 'outcome'])
    .where('call_id', '=', 'w1')
    .orderBy('due_at')
    .execute();
}

const NOTHING = { reminded: [], escalated: [], expired: [] };

describeLedgers('approval timers: reminders, escalations and expiry as ledger rows', (target) => {
  it('reminds those still asked once, escalates to more principals, then expires the call; the model is told it expired', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, clock, runs } = setup(ledger);
    const start = clock.now();
    const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    expect(call.approval).toMatchObject({
      asked: ['manager_1'],
      escalatesAt: start + 2 * SECOND,
      expiresAt: start + 5 * SECOND,
    });

    clock.advance(SECOND - 1);
    expect(await gate.recover()).toMatchObject(NOTHING);
    clock.advance(1);
    expect(await gate.recover()).toMatchObject({ reminded: ['w1'], escalated: [], expired: [] });
    expect(await gate.recover()).toMatchObject(NOTHING);

    clock.advance(SECOND);
    expect(await gate.recover()).toMatchObject({ reminded: [], escalated: ['w1'], expired: [] });
    const escalated = await gate.get('w1');
    expect(escalated?.status).toBe('awaiting_approval');
    expect(escalated?.approval?.asked).toEqual(['manager_1', 'director_1']);
    expect(escalated?.approval?.escalatesAt).toBeUndefined();
    expect(escalated?.approval?.expiresAt).toBe(start + 5 * SECOND);

    clock.advance(3 * SECOND);
    expect(await gate.recover()).toMatchObject({ reminded: [], escalated: [], expired: ['w1'] });
    expect(await gate.recover()).toMatchObject(NOTHING);
    const ended = await gate.get('w1');
    expect(ended).toMatchObject({ status: 'cancelled', reason: { code: 'approval_expired' } });
    expect((await gate.toolResult('w1', 'openai-chat')).content).toBe(
      'The call to "wire" was cancelled (approval_expired): the approval expired: nobody decided this call in time. Nothing was changed.',
    );
    expect(runs).toEqual([]);
    expect(await timerEvents(ledger)).toEqual([
      {
        to: 'awaiting_approval',
        code: 'reminded',
        message: 'reminded "manager_1": the call still waits for a decision',
      },
      {
        to: 'awaiting_approval',
        code: 'escalated',
        message: 'asked "director_1" too, as nobody decided in time ("manager_1" may still decide)',
      },
      {
        to: 'cancelled',
        code: 'approval_expired',
        message: 'the approval expired: nobody decided this call in time',
      },
    ]);
    expect(await timerRows(ledger)).toEqual([
      { kind: 'reminder', step: 0, outcome: 'fired' },
      { kind: 'escalation', step: 0, outcome: 'fired' },
      { kind: 'expiry', step: 0, outcome: 'fired' },
    ]);
    expect(await ledger.verify()).toMatchObject({ ok: true });
    await gate.close();
  });

  it('lets the principal an escalation added decide, and the one asked first still may', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, clock, runs } = setup(ledger);
    const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    const hash = await inputHash(call.input);
    // Not asked yet: the call is none of theirs to see.
    expect(await gate.approve('w1', { principal: 'director_1', inputHash: hash })).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    expect(await gate.awaiting('director_1')).toEqual([]);
    clock.advance(2 * SECOND);
    await gate.recover();
    expect((await gate.awaiting('director_1')).map((waiting) => waiting.id)).toEqual(['w1']);
    expect((await gate.awaiting('manager_1')).map((waiting) => waiting.id)).toEqual(['w1']);
    expect(await gate.approve('w1', { principal: 'director_1', inputHash: hash })).toEqual({ ok: true });
    expect(await gate.settled('w1')).toMatchObject({ status: 'committed' });
    expect(runs).toEqual([500_000]);

    const other = setup(await (await target.fresh()).open());
    const second = await other.gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    other.clock.advance(2 * SECOND);
    await other.gate.recover();
    expect(
      await other.gate.approve('w1', { principal: 'manager_1', inputHash: await inputHash(second.input) }),
    ).toEqual({ ok: true });
    expect(await other.gate.settled('w1')).toMatchObject({ status: 'committed' });
    await gate.close();
    await other.gate.close();
  });

  it('a call decided before its timers are due cancels them in the deciding transaction: none fires', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, clock } = setup(ledger);
    await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    clock.advance(SECOND / 2);
    expect(await gate.deny('w1', { principal: 'manager_1', reason: 'not this month' })).toEqual({ ok: true });
    expect(await timerRows(ledger)).toEqual([
      { kind: 'reminder', step: 0, outcome: 'cancelled' },
      { kind: 'escalation', step: 0, outcome: 'cancelled' },
      { kind: 'expiry', step: 0, outcome: 'cancelled' },
    ]);
    clock.advance(10 * SECOND);
    expect(await gate.recover()).toMatchObject(NOTHING);
    expect(await gate.get('w1')).toMatchObject({ status: 'cancelled', reason: { code: 'approval_denied' } });
    expect(await timerEvents(ledger)).toEqual([]);
    await gate.close();
  });

  it('refuses an approval that comes after the tool’s approvalTtlMs, even before the expiry has fired', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, clock, runs } = setup(ledger);
    const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    clock.advance(5 * SECOND);
    expect(
      await gate.approve('w1', { principal: 'manager_1', inputHash: await inputHash(call.input) }),
    ).toMatchObject({ ok: false, code: 'expired' });
    expect(await gate.get('w1')).toMatchObject({ status: 'cancelled', reason: { code: 'approval_expired' } });
    expect(await gate.recover()).toMatchObject(NOTHING);
    expect(runs).toEqual([]);
    await gate.close();
  });

  it('an escalation whose approvers throws leaves the call waiting for those asked, audited once; the expiry still comes', async () => {
    const ledger = await (await target.fresh()).open();
    const log = errorLog();
    const { gate, clock } = setup(ledger, {
      onError: log.onError,
      escalate: [
        {
          afterMs: 2 * SECOND,
          approvers: () => {
            throw new Error('directory unreachable');
          },
        },
      ],
    });
    await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    clock.advance(2 * SECOND);
    expect(await gate.recover()).toMatchObject({ escalated: ['w1'] });
    expect(await gate.recover()).toMatchObject(NOTHING);
    const waiting = await gate.get('w1');
    expect(waiting).toMatchObject({ status: 'awaiting_approval', approval: { asked: ['manager_1'] } });
    const failures = (await timerEvents(ledger)).filter((event) => event.code === 'escalation_failed');
    expect(failures).toEqual([
      {
        to: 'awaiting_approval',
        code: 'escalation_failed',
        message: 'nobody more was asked: approvers of escalation step 0 threw: directory unreachable',
      },
    ]);
    expect(log.messages()).toEqual([
      'toolgate: call "w1" was not escalated: approvers of escalation step 0 threw: directory unreachable',
    ]);
    expect((await timerRows(ledger))[1]).toEqual({ kind: 'escalation', step: 0, outcome: 'failed' });
    clock.advance(3 * SECOND);
    expect(await gate.recover()).toMatchObject({ expired: ['w1'] });
    await gate.close();
  });

  it('a timer claimed by a process that died fires once its claim runs out, not before', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, clock } = setup(ledger, { leaseMs: 3 * SECOND });
    await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    clock.advance(SECOND);
    // A process that claimed the reminder and then died: its lease runs 3 s.
    await ledger.db
      .updateTable('toolgate_timers')
      .set({ lease_owner: 'dead', lease_expires_at: clock.now() + 3 * SECOND, fence: 1 })
      .where('call_id', '=', 'w1')
      .where('kind', '=', 'reminder')
      .execute();
    expect(await gate.recover()).toMatchObject(NOTHING);
    clock.advance(3 * SECOND - 1);
    expect(await gate.recover()).toMatchObject({ reminded: [], escalated: ['w1'] });
    clock.advance(1);
    expect(await gate.recover()).toMatchObject({ reminded: ['w1'] });
    expect((await timerEvents(ledger)).map((event) => event.code)).toEqual(['escalated', 'reminded']);
    await gate.close();
  });

  it('fires the due timers on its own, when it sweeps', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, clock } = setup(ledger, { recover: true, leaseMs: 10 * SECOND });
    await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    const ended = gate.settled('w1');
    // Each pass is armed for the next due time once the last one's writes are done.
    for (let step = 0; step < 50 && (await gate.get('w1'))?.status === 'awaiting_approval'; step += 1) {
      await new Promise((resolve) => setImmediate(resolve));
      if (clock.due.length > 0) clock.advance(Math.max(0, (clock.due[0] as number) - clock.now()));
    }
    expect(await ended).toMatchObject({ status: 'cancelled', reason: { code: 'approval_expired' } });
    expect((await timerEvents(ledger)).map((event) => event.code)).toEqual([
      'reminded',
      'escalated',
      'approval_expired',
    ]);
    await gate.close();
  });
});

describeLedgers(
  'approval timers on two gates sharing one ledger',
  (target) => {
    it('fires each timer once when both sweep at once', async () => {
      const store = await target.fresh();
      const one = setup(await store.open());
      const two = setup(await store.open());
      await one.gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      for (const clock of [one.clock, two.clock]) clock.advance(SECOND);
      const first = await Promise.all([one.gate.recover(), two.gate.recover()]);
      expect(first.flatMap((swept) => swept.reminded)).toEqual(['w1']);
      // One timer due at a time: with the escalation and the expiry both overdue, whichever gate
      // ends the call first rightly leaves the other nothing to escalate.
      for (const clock of [one.clock, two.clock]) clock.advance(SECOND);
      const second = await Promise.all([one.gate.recover(), two.gate.recover()]);
      expect(second.flatMap((swept) => swept.escalated)).toEqual(['w1']);
      for (const clock of [one.clock, two.clock]) clock.advance(3 * SECOND);
      const third = await Promise.all([one.gate.recover(), two.gate.recover()]);
      expect(third.flatMap((swept) => swept.expired)).toEqual(['w1']);
      const ledger = await store.open();
      expect((await timerEvents(ledger)).map((event) => event.code)).toEqual([
        'reminded',
        'escalated',
        'approval_expired',
      ]);
      await one.gate.close();
      await two.gate.close();
    });
  },
  { shared: true },
);

it('refuses an escalation step at or before the wait began, or one on a tool without approvers, when the gate is created', async () => {
  const { sqliteLedger } = await import('../../src/index.ts');
  const ledger = await sqliteLedger({ path: ':memory:' });
  const tool = (extra: object) =>
    defineTool({
      name: 'wire',
      inputSchema: { type: 'object' },
      execute: () => 'sent',
      ...extra,
    });
  expect(() =>
    createServerGate({
      ledger,
      tools: [tool({ approvers: () => ['m'], escalate: [{ afterMs: 0, approvers: ['d'] }] })],
    }),
  ).toThrow(
    'createServerGate: tool "wire": `escalate[0].afterMs` must be a positive number of milliseconds after the call began to wait (got 0).',
  );
  expect(() =>
    createServerGate({
      ledger,
      tools: [tool({ approvers: () => ['m'], escalate: [{ afterMs: -5, approvers: ['d'] }] })],
    }),
  ).toThrow(/escalate\[0\]\.afterMs/);
  expect(() =>
    createServerGate({ ledger, tools: [tool({ escalate: [{ afterMs: 10, approvers: ['d'] }] })] }),
  ).toThrow(
    'createServerGate: tool "wire": `escalate` asks more principals after a while, so the tool needs `approvers` to say who is asked first.',
  );
  expect(() => createServerGate({ ledger, tools: [tool({ remindAfterMs: Number.NaN })] })).toThrow(
    /`remindAfterMs` must be a positive number/,
  );
  await ledger.close();
});
