import { defineTool, inputHash } from '@toolgate/core';
import { expect, it } from 'vitest';
import { createFakeClock } from '@toolgate/test-utils';
import { createServerGate, type Budget, type Ledger, type ServerGateOptions } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const DAY = 86_400_000;

function tools(runs: string[], { fail = false, approval = false } = {}) {
  return [
    defineTool({
      name: 'transfer',
      inputSchema: {
        type: 'object',
        properties: { to: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
        required: ['to', 'amount_cents'],
        additionalProperties: false,
      },
      needsApproval: approval,
      execute: (input) => {
        runs.push(`${input.to}:${input.amount_cents}`);
        if (fail) throw new Error('the bank is down');
        return { sent: input.amount_cents };
      },
    }),
    defineTool({
      name: 'note',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
        additionalProperties: false,
      },
      execute: (input) => {
        runs.push(`note:${input.text}`);
        return { ok: true };
      },
    }),
  ];
}

const transfers = (options: Partial<Budget> = {}): Budget => ({
  name: 'transfers_per_day',
  tools: ['transfer'],
  per: 'principal',
  windowMs: DAY,
  max: 10_000,
  measure: (input) => (input as { amount_cents: number }).amount_cents,
  ...options,
});

function setup(
  ledger: Ledger,
  budgets: readonly Budget[],
  options: Partial<ServerGateOptions> & { fail?: boolean; approval?: boolean } = {},
) {
  const runs: string[] = [];
  const clock = createFakeClock(1_767_225_600_000);
  const { fail, approval, ...rest } = options;
  const gate = createServerGate({
    tools: tools(runs, { fail: fail ?? false, approval: approval ?? false }),
    ledger,
    recover: false,
    clock,
    budgets,
    ...rest,
  });
  let n = 0;
  const send = (amount: number, { principal = 'alice', session = 'chat_a' } = {}) =>
    gate.run(
      { id: `t${++n}`, name: 'transfer', arguments: { to: 'bob', amount_cents: amount } },
      { session, principal },
    );
  return { gate, runs, clock, send };
}

describeLedgers('budgets', (target) => {
  it('admits what fits and refuses the rest with budget_exceeded, telling the model the budget, its window, used and left', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, send } = setup(ledger, [transfers()]);
    expect((await send(6000)).status).toBe('committed');
    expect((await send(3000)).status).toBe('committed');
    const over = await send(2000);
    expect(over).toMatchObject({ status: 'rejected', reason: { code: 'budget_exceeded' } });
    expect(over.reason?.message).toBe(
      'budget "transfers_per_day" allows 10000 in any 1 day for this principal; 9000 is used and 1000 is left, and this call would take 2000',
    );
    expect(runs).toEqual(['bob:6000', 'bob:3000']);
    // The refusal is a move in the audit trail, made by the budget.
    const refusal = (await ledger.eventsAfter(0)).filter((event) => event.callId === over.id).at(-1);
    expect(refusal).toMatchObject({
      from: 'validated',
      to: 'rejected',
      actor: 'toolgate:budget',
      reason: { code: 'budget_exceeded' },
    });
    const text = (await gate.toolResult(over.id, 'openai-chat')).content;
    expect(text).toContain('rejected (budget_exceeded)');
    expect(text).toContain('9000 is used and 1000 is left');
    // What is left still fits.
    expect((await send(1000)).status).toBe('committed');
    expect((await send(1)).status).toBe('rejected');
    await gate.close();
  });

  it('is a rolling window: what was admitted leaves it windowMs later', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, clock, send } = setup(ledger, [transfers()]);
    expect((await send(8000)).status).toBe('committed');
    clock.advance(DAY / 2);
    expect((await send(2000)).status).toBe('committed');
    expect((await send(1000)).status).toBe('rejected');
    clock.advance(DAY / 2); // the 8000 has left the window; the 2000 has not
    expect((await send(8000)).status).toBe('committed');
    expect((await send(1)).status).toBe('rejected');
    await gate.close();
  });

  it('keeps one budget per principal, per session, per tool, or per key the app gives', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, send } = setup(ledger, [
      transfers({ name: 'per_session', per: 'session', max: 5000 }),
      transfers({
        name: 'per_account',
        per: (call) => `${call.principal}->${(call.input as { to: string }).to}`,
        max: 100_000,
      }),
    ]);
    expect((await send(5000, { session: 'chat_a' })).status).toBe('committed');
    expect((await send(5000, { session: 'chat_b', principal: 'carol' })).status).toBe('committed');
    const refused = await send(1, { session: 'chat_a' });
    expect(refused.reason?.message).toContain(
      'budget "per_session" allows 5000 in any 1 day for this session',
    );
    await gate.close();
  });

  it('counts calls waiting for a person and failed after running, not those denied, cancelled or refused', async () => {
    const ledger = await (await target.fresh()).open();
    const waiting = setup(ledger, [transfers()], { approval: true });
    const first = await waiting.gate.propose(
      { id: 'w1', name: 'transfer', arguments: { to: 'bob', amount_cents: 7000 } },
      { session: 'chat_a', principal: 'alice' },
    );
    expect(first.status).toBe('awaiting_approval');
    const second = await waiting.gate.propose(
      { id: 'w2', name: 'transfer', arguments: { to: 'bob', amount_cents: 7000 } },
      { session: 'chat_a', principal: 'alice' },
    );
    expect(second).toMatchObject({ status: 'rejected', reason: { code: 'budget_exceeded' } });
    expect(second.reason?.message).toContain('7000 is used and 3000 is left');
    // Denied: its share is free again.
    expect(await waiting.gate.deny('w1', { principal: 'alice' })).toEqual({ ok: true });
    const third = await waiting.gate.propose(
      { id: 'w3', name: 'transfer', arguments: { to: 'bob', amount_cents: 7000 } },
      { session: 'chat_a', principal: 'alice' },
    );
    expect(third.status).toBe('awaiting_approval');
    expect(await waiting.gate.cancel('w3', { principal: 'alice' })).toEqual({ ok: true });
    await waiting.gate.close();

    const failing = setup(ledger, [transfers()], { fail: true });
    expect(
      await failing.gate.run(
        { id: 'f1', name: 'transfer', arguments: { to: 'bob', amount_cents: 9000 } },
        { session: 'chat_b', principal: 'alice' },
      ),
    ).toMatchObject({ status: 'failed' });
    const after = await failing.gate.run(
      { id: 'f2', name: 'transfer', arguments: { to: 'bob', amount_cents: 2000 } },
      { session: 'chat_b', principal: 'alice' },
    );
    expect(after.reason?.message).toContain('9000 is used and 1000 is left');
    await failing.gate.close();
  });

  it('gives back the share of a call cancelled while it runs, and of one whose approval expired', async () => {
    const ledger = await (await target.fresh()).open();
    const started = new Map<number, () => void>();
    let onStart: (amount: number) => void = () => undefined;
    const slow = defineTool({
      name: 'transfer',
      inputSchema: {
        type: 'object',
        properties: { amount_cents: { type: 'integer' } },
        required: ['amount_cents'],
      },
      needsApproval: (input) => input.amount_cents === 6000,
      execute: (input, { signal }) =>
        new Promise<{ ok: boolean }>((resolve, reject) => {
          started.set(input.amount_cents, () => resolve({ ok: true }));
          onStart(input.amount_cents);
          signal.addEventListener('abort', () => reject(signal.reason as Error));
        }),
    });
    const clock = createFakeClock(1_767_225_600_000);
    const gate = createServerGate({
      tools: [slow],
      ledger,
      recover: false,
      clock,
      approvalTtlMs: 60_000,
      budgets: [transfers()],
    });
    const as = { session: 'chat_a', principal: 'alice' };
    const running = await gate.propose({ id: 'r1', name: 'transfer', arguments: { amount_cents: 4000 } }, as);
    expect(running.status).toBe('executing');
    const waiting = await gate.propose({ id: 'r2', name: 'transfer', arguments: { amount_cents: 6000 } }, as);
    expect(waiting.status).toBe('awaiting_approval');
    expect(
      (await gate.propose({ id: 'r3', name: 'transfer', arguments: { amount_cents: 1 } }, as)).reason
        ?.message,
    ).toContain('10000 is used and 0 is left');
    expect(await gate.cancel('r1', { principal: 'alice' })).toEqual({ ok: true });
    clock.advance(60_000);
    await gate.recover();
    expect((await gate.get('r2'))?.reason?.code).toBe('approval_expired');
    const running4 = new Promise<void>((resolve) => (onStart = (amount) => amount === 10_000 && resolve()));
    const after = await gate.propose({ id: 'r4', name: 'transfer', arguments: { amount_cents: 10_000 } }, as);
    expect(after.status).toBe('executing');
    await running4;
    started.get(10_000)?.();
    expect((await gate.settled('r4'))?.status).toBe('committed');
    await gate.close();
  });

  it("applies only to the budget's tools", async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs } = setup(ledger, [transfers({ max: 0 })]);
    expect(
      (
        await gate.run(
          { id: 'n1', name: 'note', arguments: { text: 'hi' } },
          { session: 'chat_a', principal: 'alice' },
        )
      ).status,
    ).toBe('committed');
    expect(runs).toEqual(['note:hi']);
    await gate.close();
  });

  it("with over: 'approve', sends an over-budget call to a person, and the call names the budget", async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, send } = setup(ledger, [transfers({ over: 'approve' })]);
    expect((await send(9000)).status).toBe('committed');
    const over = await gate.propose(
      { id: 'big', name: 'transfer', arguments: { to: 'bob', amount_cents: 5000 } },
      { session: 'chat_a', principal: 'alice' },
    );
    expect(over.status).toBe('awaiting_approval');
    expect(over.approval?.overBudget).toEqual({
      budget: 'transfers_per_day',
      message:
        'budget "transfers_per_day" allows 10000 in any 1 day for this principal; 9000 is used and 1000 is left, and this call would take 5000',
    });
    expect((await gate.get('big'))?.approval?.overBudget?.budget).toBe('transfers_per_day');
    const events = (await ledger.eventsAfter(0)).filter((event) => event.callId === 'big');
    expect(events.at(-1)).toMatchObject({
      from: 'validated',
      to: 'awaiting_approval',
      actor: 'toolgate:budget',
    });
    expect(await gate.approve('big', { principal: 'alice', inputHash: await inputHash(over.input) })).toEqual(
      { ok: true },
    );
    expect((await gate.settled('big'))?.status).toBe('committed');
    expect(runs).toEqual(['bob:9000', 'bob:5000']);
    await gate.close();
  });

  it('in shadow, refuses nothing and audits what it would have refused', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, send } = setup(ledger, [transfers({ shadow: true })]);
    expect((await send(9000)).status).toBe('committed');
    const over = await send(5000);
    expect(over.status).toBe('committed');
    expect(runs).toEqual(['bob:9000', 'bob:5000']);
    const audited = (await ledger.eventsAfter(0)).filter((event) => event.reason?.code === 'budget_exceeded');
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({
      callId: over.id,
      from: 'executing',
      to: 'executing',
      actor: 'toolgate:budget',
    });
    expect(audited[0]?.reason?.message).toContain(
      'would have refused this call: budget "transfers_per_day" allows 10000',
    );
    expect(await ledger.verify()).toMatchObject({ ok: true });
    await gate.close();
  });

  it('refuses a call whose measure throws or answers no number (fail closed), and says why', async () => {
    const ledger = await (await target.fresh()).open();
    const answers: unknown[] = [Number.NaN, '12', -5, Promise.resolve(1), undefined];
    let throwing = true;
    const measure = () => {
      if (throwing) throw new Error('no amount');
      return answers.shift() as number;
    };
    const { gate, runs, send } = setup(ledger, [transfers({ measure })]);
    const thrown = await send(100);
    expect(thrown).toMatchObject({
      status: 'rejected',
      reason: {
        code: 'budget_exceeded',
        message: 'budget "transfers_per_day" could not measure this call: its `measure` threw: no amount',
      },
    });
    throwing = false;
    const said: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const call = await send(100);
      expect(call.status).toBe('rejected');
      said.push(call.reason?.message ?? '');
    }
    expect(said.map((message) => message.replace(/.*answered (.*), not a finite number.*/, '$1'))).toEqual([
      'NaN',
      '"12"',
      '-5',
      'a promise',
      'undefined',
    ]);
    expect(runs).toEqual([]);
    await gate.close();
  });

  it('a shadow budget whose measure throws audits it and refuses nothing', async () => {
    const ledger = await (await target.fresh()).open();
    const { gate, runs, send } = setup(ledger, [
      transfers({
        shadow: true,
        measure: () => {
          throw new Error('no amount');
        },
      }),
    ]);
    expect((await send(100)).status).toBe('committed');
    expect(runs).toEqual(['bob:100']);
    const audited = (await ledger.eventsAfter(0)).filter((event) => event.reason?.code === 'budget_exceeded');
    expect(audited.map((event) => event.reason?.message)).toEqual([
      'shadow budget "transfers_per_day" could not measure this call: its `measure` threw: no amount',
    ]);
    await gate.close();
  });
});

describeLedgers(
  'budgets across gates',
  (target) => {
    it('two gates on one store admit exactly what fits when calls arrive at once', async () => {
      // On SQLite two gates of one process share its ledger object (a second connection in the same
      // process would block the first one's event loop); processes of their own are in budget-processes.
      const store = await target.fresh();
      const first = await store.open();
      const [one, two] = [
        setup(first, [transfers()]),
        setup(target.dialect === 'sqlite' ? first : await store.open(), [transfers()]),
      ];
      const calls = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          (index % 2 === 0 ? one : two).gate.run(
            { id: `c${index}`, name: 'transfer', arguments: { to: 'bob', amount_cents: 1000 } },
            { session: 'chat_a', principal: 'alice' },
          ),
        ),
      );
      expect(calls.filter((call) => call.status === 'committed')).toHaveLength(10);
      expect(calls.filter((call) => call.reason?.code === 'budget_exceeded')).toHaveLength(10);
      expect(one.runs.length + two.runs.length).toBe(10);
      await one.gate.close();
      await two.gate.close();
    });
  },
  { shared: true },
);

it('refuses a budget it cannot work with at start, saying which and why', async () => {
  const ledger = { dialect: 'sqlite' } as unknown as Ledger;
  const make = (budgets: unknown) => () =>
    createServerGate({ tools: [], ledger, recover: false, budgets: budgets as Budget[] });
  expect(make([transfers({ windowMs: 0 })])).toThrow(
    'createServerGate: budget "transfers_per_day": `windowMs` must be a positive number of milliseconds (got 0).',
  );
  expect(make([transfers({ windowMs: -1 })])).toThrow(
    '`windowMs` must be a positive number of milliseconds (got -1)',
  );
  expect(make([transfers({ max: -1 })])).toThrow(
    'createServerGate: budget "transfers_per_day": `max` must be a finite number of 0 or more (got -1).',
  );
  expect(make([transfers({ max: Number.POSITIVE_INFINITY })])).toThrow(
    '`max` must be a finite number of 0 or more',
  );
  expect(make([transfers({ per: 'user' as never })])).toThrow(
    "`per` must be 'principal', 'session', 'tool' or a function",
  );
  expect(make([transfers({ over: 'ask' as never })])).toThrow("`over` must be 'refuse' or 'approve'");
  expect(make([transfers({ measure: 5 as never })])).toThrow('`measure` must be a function');
  expect(make([transfers(), transfers()])).toThrow('two budgets are named "transfers_per_day"');
  expect(make([{ per: 'principal', windowMs: 1, max: 1 }])).toThrow(
    'budget #0: `name` must be a non-empty string',
  );
  expect(make({})).toThrow('`budgets` must be an array');
});
