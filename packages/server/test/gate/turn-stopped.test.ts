/** `reader.stopped()` over `serverGate.turn(...)`: the turn's records once each call has ended or waits for a person. */
import { defineTool } from '@toolgate/core';
import { readOpenAIChatStream, type OpenAIChatChunk } from '@toolgate/core/openai';
import { expect, it } from 'vitest';
import { createServerGate, type Ledger } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const runs: { amount: number; finish: () => void }[] = [];
let started: (() => void)[] = [];
/** Resolves once the tool has been started `count` times in all. */
const runsStarted = (count: number) =>
  new Promise<void>((resolve) => {
    if (runs.length >= count) resolve();
    else started.push(() => runs.length >= count && resolve());
  });
const pay = defineTool({
  name: 'pay',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 } },
    required: ['amount_cents'],
    additionalProperties: false,
  },
  needsApproval: (input) => input.amount_cents > 1000,
  execute: (input) =>
    new Promise<{ paid: number }>((resolve) => {
      runs.push({ amount: input.amount_cents, finish: () => resolve({ paid: input.amount_cents }) });
      for (const tell of started) tell();
    }),
});

const call = (index: number, id: string, name: string, args: string): OpenAIChatChunk => ({
  id: 'chatcmpl-S',
  choices: [
    {
      index: 0,
      delta: { tool_calls: [{ index, id, function: { name, arguments: args } }] },
      finish_reason: null,
    },
  ],
});
const finish: OpenAIChatChunk = {
  id: 'chatcmpl-S',
  choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
};

function gateOn(ledger: Ledger) {
  runs.length = 0;
  started = [];
  return createServerGate({ tools: [pay], ledger, recover: false });
}

/** Whether a promise is done once the ledger has had time to answer what is asked of it now. */
async function doneAfter(promise: Promise<unknown>, ledgerWork: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await ledgerWork;
  for (let i = 0; i < 20; i++) await Promise.resolve();
  return done;
}

describeLedgers('reader.stopped() over a server gate turn', (target) => {
  it('answers a call that waits for a person without deciding it, refused and unstored calls, in the provider order', async () => {
    const gate = gateOn(await (await target.fresh()).open());
    // Someone else's session, and a call id that is already taken with other arguments.
    expect(
      (
        await gate.propose(
          { id: 'call_bob', name: 'pay', arguments: { amount_cents: 5 } },
          { session: 'chat_bob', principal: 'bob' },
        )
      ).status,
    ).toBe('executing');
    expect(
      (
        await gate.propose(
          { id: 'call_taken', name: 'pay', arguments: { amount_cents: 7 } },
          { session: 'chat_1', principal: 'alice' },
        )
      ).status,
    ).toBe('executing');
    const reader = readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_1' }));
    await reader.read([
      call(0, 'call_big', 'pay', '{"amount_cents":5000}'),
      call(1, 'call_nope', 'no_such_tool', '{}'),
      call(2, 'call_taken', 'pay', '{"amount_cents":8}'),
      finish,
    ]);
    const records = await reader.stopped();
    expect(records.map((record) => [record.id, record.status, record.reason?.code])).toEqual([
      ['call_big', 'awaiting_approval', undefined],
      ['call_nope', 'rejected', 'unknown_tool'],
      ['call_taken', 'rejected', 'id_conflict'],
    ]);
    // The person has not decided, and the taken id still names its own call.
    expect(await gate.get('call_big')).toMatchObject({ status: 'awaiting_approval' });
    expect(await gate.get('call_taken')).toMatchObject({ status: 'executing', input: { amount_cents: 7 } });

    // A principal who may not see the session it streams into: refused, nothing stored, nothing revealed.
    const intruder = readOpenAIChatStream(gate.turn({ session: 'chat_bob', principal: 'mallory' }));
    await intruder.read([
      call(0, 'call_bob', 'pay', '{"amount_cents":5}'),
      call(1, 'call_m', 'pay', '{"amount_cents":6}'),
      finish,
    ]);
    const refused = await intruder.stopped();
    expect(refused.map((record) => [record.id, record.status, record.reason?.code])).toEqual([
      ['call_bob', 'rejected', 'unauthorized'],
      ['call_m', 'rejected', 'unauthorized'],
    ]);
    expect(JSON.stringify(refused)).not.toContain('"amount_cents":5}');
    expect(await gate.get('call_m')).toBeUndefined();
    for (const run of runs) run.finish();
    await gate.close();
  });

  it('waits for a call that runs to end, and answers with its output', async () => {
    const gate = gateOn(await (await target.fresh()).open());
    const reader = readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice' }));
    await reader.read([
      call(0, 'call_small', 'pay', '{"amount_cents":300}'),
      call(1, 'call_big', 'pay', '{"amount_cents":3000}'),
      finish,
    ]);
    const stopped = reader.stopped();
    expect(await doneAfter(stopped, runsStarted(1))).toBe(false);
    expect(runs.map((run) => run.amount)).toEqual([300]);
    runs[0]?.finish();
    const records = await stopped;
    expect(records.map((record) => [record.id, record.status])).toEqual([
      ['call_small', 'committed'],
      ['call_big', 'awaiting_approval'],
    ]);
    expect(records[0]?.output).toEqual({ paid: 300 });
    await gate.close();
  });

  it('a call cancelled before its arguments were complete never reaches the ledger, and has stopped', async () => {
    const gate = gateOn(await (await target.fresh()).open());
    const reader = readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice' }));
    reader.push(call(0, 'call_half', 'pay', '{"amount_'));
    reader.abort('the user pressed stop');
    const records = await reader.stopped();
    expect(records.map((record) => [record.id, record.status, record.reason?.code])).toEqual([
      ['call_half', 'cancelled', 'user_cancelled'],
    ]);
    expect(await gate.get('call_half')).toBeUndefined();
    await gate.close();
  });

  it('rejects, rather than hangs, when the ledger cannot take the proposal', async () => {
    const ledger = await (await target.fresh()).open();
    const errors: unknown[] = [];
    const gate = createServerGate({
      tools: [pay],
      ledger,
      recover: false,
      onError: (error) => errors.push(error),
    });
    await ledger.close();
    const reader = readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice' }));
    await reader.read([call(0, 'call_lost', 'pay', '{"amount_cents":5}'), finish]);
    await expect(reader.stopped()).rejects.toThrow();
    expect(errors.length).toBeGreaterThan(0);
    await gate.close();
  });
});
