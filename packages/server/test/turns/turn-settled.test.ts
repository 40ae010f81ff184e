/** `onTurnSettled`: a turn's next step, run once its last call has ended, wherever it ended. */
import { defineTool, inputHash, toolResult } from '@toolgate/core';
import { readOpenAIChatStream, type OpenAIChatChunk } from '@toolgate/core/openai';
import { expect, it, vi } from 'vitest';
import { createFakeClock } from '@toolgate/test-utils';
import {
  createServerGate,
  type EndedTurn,
  type Ledger,
  type ServerGate,
  type ServerGateOptions,
} from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const pay = defineTool({
  name: 'pay',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 } },
    required: ['amount_cents'],
    additionalProperties: false,
  },
  needsApproval: (input) => input.amount_cents > 1000,
  execute: (input) => ({ paid: input.amount_cents }),
});

const call = (index: number, id: string, args: string, name = 'pay'): OpenAIChatChunk => ({
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

/** A handler that records each turn it is given; `next()` resolves with the next one. */
function handlerLog(behave: (turn: EndedTurn) => unknown = () => undefined) {
  const turns: EndedTurn[] = [];
  let waiting: ((turn: EndedTurn) => void)[] = [];
  return {
    turns,
    handler(turn: EndedTurn) {
      turns.push(turn);
      for (const resolve of waiting) resolve(turn);
      waiting = [];
      return behave(turn);
    },
    next: () => new Promise<EndedTurn>((resolve) => waiting.push(resolve)),
  };
}

/** Room for a ledger write on a busy machine: `vi.waitFor` gives up after one second by default. */
const PATIENCE = { timeout: 10_000, interval: 20 };

function errorLog() {
  const errors: Error[] = [];
  return {
    errors,
    onError: (error: unknown) => errors.push(error instanceof Error ? error : new Error(String(error))),
    messages: () => errors.map((error) => error.message),
  };
}

function gateOn(ledger: Ledger, options: Partial<ServerGateOptions> = {}): ServerGate {
  return createServerGate({ tools: [pay], ledger, recover: false, ...options });
}

async function turnRow(ledger: Ledger, session: string, id: string) {
  return ledger.db
    .selectFrom('toolgate_turns')
    .selectAll()
    .where('session', '=', session)
    .where('id', '=', id)
    .executeTakeFirst();
}

async function approve(gate: ServerGate, id: string, principal = 'alice') {
  const record = await gate.get(id);
  return gate.approve(id, { principal, inputHash: await inputHash(record?.input) });
}

describeLedgers('onTurnSettled', (target) => {
  it('runs once the last call has ended in another request, with each call as it ended, and never again', async () => {
    const ledger = await (await target.fresh()).open();
    const log = handlerLog();
    const gate = gateOn(ledger, { onTurnSettled: log.handler });
    const reader = readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_1' }));
    await reader.read([
      call(0, 'call_small', '{"amount_cents":300}'),
      call(1, 'call_big', '{"amount_cents":5000}'),
      call(2, 'call_bad', '{"amount_cents":0}'),
      finish,
    ]);
    expect((await reader.stopped()).map((record) => record.status)).toEqual([
      'committed',
      'awaiting_approval',
      'rejected',
    ]);
    expect(await turnRow(ledger, 'chat_1', 'turn_1')).toMatchObject({
      principal: 'alice',
      done_at: null,
      attempts: 0,
    });
    expect(log.turns).toEqual([]);

    // The person decides later, in a request of its own.
    const handled = log.next();
    expect(await approve(gate, 'call_big')).toEqual({ ok: true });
    const turn = await handled;
    expect({ id: turn.id, session: turn.session, principal: turn.principal, attempt: turn.attempt }).toEqual({
      id: 'turn_1',
      session: 'chat_1',
      principal: 'alice',
      attempt: 1,
    });
    expect(turn.calls.map((settled) => [settled.id, settled.status, settled.reason?.code])).toEqual([
      ['call_small', 'committed', undefined],
      ['call_big', 'committed', undefined],
      ['call_bad', 'rejected', 'invalid_arguments'],
    ]);
    expect(toolResult(turn.calls[1] as EndedTurn['calls'][number], 'openai-chat')).toMatchObject({
      tool_call_id: 'call_big',
      content: '{"paid":5000}',
    });
    expect(turn.signal.aborted).toBe(false);
    await vi.waitFor(
      async () => expect((await turnRow(ledger, 'chat_1', 'turn_1'))?.done_at).not.toBeNull(),
      PATIENCE,
    );

    await gate.recover();
    expect(log.turns).toHaveLength(1);
    await gate.close();
  });

  it('runs at once for a turn whose calls all ended in its stream; a turn without calls is not recorded', async () => {
    const ledger = await (await target.fresh()).open();
    const log = handlerLog();
    const gate = gateOn(ledger, { onTurnSettled: log.handler });
    const handled = log.next();
    const reader = readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice' }));
    await reader.read([
      call(0, 'call_a', '{"amount_cents":300}'),
      call(1, 'call_b', '{}', 'no_such_tool'),
      finish,
    ]);
    const turn = await handled;
    // No turn id given: the provider's response id names it.
    expect(turn.id).toBe('chatcmpl-S');
    expect(turn.calls.map((settled) => [settled.id, settled.status])).toEqual([
      ['call_a', 'committed'],
      ['call_b', 'rejected'],
    ]);
    const quiet = readOpenAIChatStream(
      gate.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_text' }),
    );
    await quiet.read([finish]);
    await gate.recover();
    expect(await turnRow(ledger, 'chat_1', 'turn_text')).toBeUndefined();
    expect(log.turns).toHaveLength(1);
    await gate.close();
  });

  it('a handler that throws: the error goes to onError, and the turn runs again with the same id until it resolves', async () => {
    const ledger = await (await target.fresh()).open();
    const clock = createFakeClock(Date.now());
    const errors = errorLog();
    const log = handlerLog((turn) => {
      if (turn.attempt === 1) throw new Error('the model could not be reached');
    });
    const gate = gateOn(ledger, { onTurnSettled: log.handler, onError: errors.onError, clock });
    const first = log.next();
    const reader = readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_1' }));
    await reader.read([call(0, 'call_a', '{"amount_cents":300}'), finish]);
    expect((await first).attempt).toBe(1);
    await vi.waitFor(
      async () => expect((await turnRow(ledger, 'chat_1', 'turn_1'))?.lease_owner).toBeNull(),
      PATIENCE,
    );
    expect(errors.messages()).toEqual(['the model could not be reached']);
    // Not at once: after a pause.
    await gate.recover();
    expect(log.turns).toHaveLength(1);
    const second = log.next();
    clock.advance(250);
    const retried = await second;
    expect({
      id: retried.id,
      attempt: retried.attempt,
      calls: retried.calls.map((settled) => settled.id),
    }).toEqual({ id: 'turn_1', attempt: 2, calls: ['call_a'] });
    await vi.waitFor(
      async () =>
        expect(await turnRow(ledger, 'chat_1', 'turn_1')).toMatchObject({
          done_at: expect.any(Number),
          attempts: 2,
        }),
      PATIENCE,
    );
    clock.advance(60_000);
    await gate.recover();
    expect(log.turns).toHaveLength(2);
    await gate.close();
  });

  it('a turn whose principal may not see its session is refused call by call and not recorded; its handler never runs', async () => {
    const ledger = await (await target.fresh()).open();
    const log = handlerLog();
    const errors = errorLog();
    const gate = gateOn(ledger, { onTurnSettled: log.handler, onError: errors.onError });
    const owned = log.next();
    await readOpenAIChatStream(gate.turn({ session: 'chat_bob', principal: 'bob', turn: 'turn_bob' })).read([
      call(0, 'call_bob', '{"amount_cents":5}'),
      finish,
    ]);
    await owned;
    const intruder = readOpenAIChatStream(
      gate.turn({ session: 'chat_bob', principal: 'mallory', turn: 'turn_m' }),
    );
    await intruder.read([call(0, 'call_m', '{"amount_cents":6}'), finish]);
    expect((await intruder.stopped()).map((record) => record.reason?.code)).toEqual(['unauthorized']);
    await gate.recover();
    await gate.close();
    expect(await turnRow(ledger, 'chat_bob', 'turn_m')).toBeUndefined();
    expect(log.turns.map((turn) => turn.id)).toEqual(['turn_bob']);
    expect(errors.errors).toEqual([]);
  });

  it('a turn id the app gave again for other calls is refused with a reason; a provider id that repeats gets a turn of its own', async () => {
    const ledger = await (await target.fresh()).open();
    const log = handlerLog();
    const errors = errorLog();
    const gate = gateOn(ledger, { onTurnSettled: log.handler, onError: errors.onError });
    let handled = log.next();
    await readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_1' })).read([
      call(0, 'call_a', '{"amount_cents":1}'),
      finish,
    ]);
    await handled;
    // The same stream read again (a retried request) is the same turn: nothing new runs.
    await readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_1' })).read([
      call(0, 'call_a', '{"amount_cents":1}'),
      finish,
    ]);
    const other = readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_1' }));
    await other.read([call(0, 'call_other', '{"amount_cents":2}'), finish]);
    await expect(other.stopped()).rejects.toThrow(
      'turn "turn_1" in session "chat_1" is already another turn (other calls, or another principal); this one was not recorded',
    );
    expect(errors.messages()).toEqual([
      expect.stringContaining('turn "turn_1" in session "chat_1" is already another turn'),
    ]);
    // Its call was proposed all the same: only the turn was refused.
    expect(await gate.get('call_other')).toMatchObject({ status: 'committed' });
    // The same id in another session is another turn.
    handled = log.next();
    await readOpenAIChatStream(gate.turn({ session: 'chat_2', principal: 'alice', turn: 'turn_1' })).read([
      call(0, 'call_c', '{"amount_cents":3}'),
      finish,
    ]);
    expect((await handled).calls.map((settled) => settled.id)).toEqual(['call_c']);
    // A scripted model that repeats its response id: each turn is run.
    for (const id of ['call_d', 'call_e']) {
      handled = log.next();
      await readOpenAIChatStream(gate.turn({ session: 'chat_3', principal: 'alice' })).read([
        call(0, id, '{"amount_cents":4}'),
        finish,
      ]);
      expect((await handled).calls.map((settled) => settled.id)).toEqual([id]);
    }
    await gate.recover();
    expect(log.turns.map((turn) => [turn.session, turn.calls.map((settled) => settled.id).join()])).toEqual([
      ['chat_1', 'call_a'],
      ['chat_2', 'call_c'],
      ['chat_3', 'call_d'],
      ['chat_3', 'call_e'],
    ]);
    expect(errors.errors).toHaveLength(1);
    await gate.close();
  });

  it('a signal already aborted when the turn opens: each call is cancelled, and the handler runs once with them', async () => {
    const ledger = await (await target.fresh()).open();
    const log = handlerLog();
    const gate = gateOn(ledger, { onTurnSettled: log.handler });
    const handled = log.next();
    const reader = readOpenAIChatStream(
      gate.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_1', signal: AbortSignal.abort() }),
    );
    await reader.read([call(0, 'call_a', '{"amount_cents":5000}'), finish]);
    const turn = await handled;
    expect(turn.calls.map((settled) => [settled.id, settled.status, settled.reason?.code])).toEqual([
      ['call_a', 'cancelled', 'user_cancelled'],
    ]);
    await expect(
      gate.turn({ session: 'chat_1', principal: 'alice' }).stopped('call_nowhere'),
    ).rejects.toThrow('turn.stopped: call "call_nowhere" was not proposed in this turn.');
    await gate.close();
  });
});

describeLedgers(
  'onTurnSettled with two app servers on one ledger',
  (target) => {
    it('runs exactly once in all when the last call is approved through the other gate', async () => {
      const store = await target.fresh();
      const logA = handlerLog();
      const logB = handlerLog();
      const gateA = gateOn(await store.open(), { onTurnSettled: logA.handler, instance: 'a' });
      const gateB = gateOn(await store.open(), { onTurnSettled: logB.handler, instance: 'b' });
      const reader = readOpenAIChatStream(
        gateA.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_1' }),
      );
      await reader.read([
        call(0, 'call_1', '{"amount_cents":2000}'),
        call(1, 'call_2', '{"amount_cents":3000}'),
        finish,
      ]);
      await reader.stopped();
      expect(await approve(gateA, 'call_1')).toEqual({ ok: true });
      const either = Promise.race([logA.next(), logB.next()]);
      expect(await approve(gateB, 'call_2')).toEqual({ ok: true });
      const turn = await either;
      expect(turn.calls.map((settled) => settled.status)).toEqual(['committed', 'committed']);
      const ledger = await store.open();
      await vi.waitFor(
        async () => expect((await turnRow(ledger, 'chat_1', 'turn_1'))?.done_at).not.toBeNull(),
        PATIENCE,
      );
      await Promise.all([gateA.recover(), gateB.recover()]);
      expect(logA.turns.length + logB.turns.length).toBe(1);
      await gateA.close();
      await gateB.close();
    });

    it('a turn whose last call ended while no gate with a handler was up runs on the next start', async () => {
      const store = await target.fresh();
      const first = gateOn(await store.open(), { onTurnSettled: () => undefined, instance: 'first' });
      const reader = readOpenAIChatStream(
        first.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_1' }),
      );
      await reader.read([call(0, 'call_1', '{"amount_cents":2000}'), finish]);
      expect((await reader.stopped()).map((record) => record.status)).toEqual(['awaiting_approval']);
      await first.close();
      // Approved through an app server that keeps no turns.
      const plain = gateOn(await store.open(), { instance: 'plain' });
      expect(await approve(plain, 'call_1')).toEqual({ ok: true });
      expect(await plain.settled('call_1')).toMatchObject({ status: 'committed' });
      await plain.close();
      const log = handlerLog();
      const handled = log.next();
      const restarted = createServerGate({
        tools: [pay],
        ledger: await store.open(),
        onTurnSettled: log.handler,
        instance: 'restarted',
      });
      const turn = await handled;
      expect({
        id: turn.id,
        attempt: turn.attempt,
        calls: turn.calls.map((settled) => settled.status),
      }).toEqual({ id: 'turn_1', attempt: 1, calls: ['committed'] });
      await restarted.close();
    });

    it('a handler that never resolves keeps its claim while its gate lives; the other takes the turn over only once it stops renewing', async () => {
      const store = await target.fresh();
      const clock = createFakeClock(Date.now());
      const leaseMs = 900;
      const logA = handlerLog(() => new Promise(() => undefined));
      const logB = handlerLog();
      const gateA = gateOn(await store.open(), {
        onTurnSettled: logA.handler,
        instance: 'a',
        clock,
        leaseMs,
      });
      const ledger = await store.open();
      const started = logA.next();
      await readOpenAIChatStream(gateA.turn({ session: 'chat_1', principal: 'alice', turn: 'turn_1' })).read([
        call(0, 'call_1', '{"amount_cents":5}'),
        finish,
      ]);
      const first = await started;
      // The second gate starts once the first holds the turn: whichever claims a settled turn first
      // runs it, and a second gate that heard of the call's end first would have taken it.
      const gateB = gateOn(await store.open(), {
        onTurnSettled: logB.handler,
        instance: 'b',
        clock,
        leaseMs,
      });
      for (let period = 0; period < 4; period++) {
        // The next renewal is set only once the last one is written: moving the clock before
        // then would pass it by.
        await vi.waitFor(() => expect(clock.due).toContain(clock.now() + leaseMs / 3), PATIENCE);
        clock.advance(leaseMs / 3);
        const renewed = clock.now() + leaseMs;
        await vi.waitFor(
          async () => expect((await turnRow(ledger, 'chat_1', 'turn_1'))?.lease_expires_at).toBe(renewed),
          PATIENCE,
        );
        await gateB.recover();
      }
      expect(logB.turns).toEqual([]);
      expect(first.signal.aborted).toBe(false);
      // The first gate goes away without letting go: the other waits out the lease, then runs it again.
      await gateA.close();
      expect(first.signal.aborted).toBe(true);
      await gateB.recover();
      expect(logB.turns).toEqual([]);
      const taken = logB.next();
      clock.advance(leaseMs);
      await gateB.recover();
      const again = await taken;
      expect({ id: again.id, attempt: again.attempt }).toEqual({ id: 'turn_1', attempt: 2 });
      await gateB.close();
    });
  },
  { shared: true },
);
