import { describe, expect, it } from 'vitest';
import { createContinuationGuard, createToolGate, type SettledCall } from '../src/index.ts';
import { openaiChatReply } from '../src/openai.ts';
import { createWorkspace, getTime, getWeather } from '@toolgate/test-utils';

function setup() {
  let n = 0;
  const approved = { ...getTime(), needsApproval: true };
  const gate = createToolGate({ tools: [getWeather(), approved], store: createWorkspace() });
  /** Proposes one turn of calls and waits for them, as a chat loop would. */
  const turn = async (...calls: { name: string; arguments: string }[]): Promise<SettledCall[]> =>
    Promise.all(calls.map((call) => gate.settled(gate.propose({ id: `c${++n}`, ...call }).id)));
  return { gate, turn };
}

const ok = { name: 'get_weather', arguments: '{"location":"Oslo"}' };
const bad = { name: 'get_weather', arguments: '{"location":1}' };

describe('continuation guard', () => {
  it('sends a settled turn, then stops after 3 automatic turns in a row, saying why and what to tell the model', async () => {
    const { turn } = setup();
    const guard = createContinuationGuard();
    expect(guard.decide(await turn(ok))).toEqual({ action: 'send', autoTurns: 1 });
    expect(guard.decide(await turn(ok))).toEqual({ action: 'send', autoTurns: 2 });
    expect(guard.decide(await turn(ok))).toEqual({ action: 'send', autoTurns: 3 });
    const fourth = await turn(ok);
    const decision = guard.decide(fourth);
    expect(decision).toMatchObject({ action: 'stop', reason: { code: 'auto_turn_limit' } });
    if (decision.action !== 'stop') throw new Error('expected stop');
    expect(decision.reason.message).toBe(
      '3 replies in a row went back to the model without a person, so the conversation was paused',
    );
    expect(openaiChatReply(fourth, { notice: decision.notice }).at(-1)).toEqual({
      role: 'user',
      content: decision.notice,
    });
  });

  it('waits while a call awaits a person, and never counts a turn twice', async () => {
    const { gate } = setup();
    const guard = createContinuationGuard({ maxAutoTurns: 1 });
    const waiting = gate.propose({ id: 'a1', name: 'get_time', arguments: '{"timezone":"UTC"}' });
    expect(guard.decide([waiting])).toEqual({ action: 'wait', pending: ['a1'], awaitingApproval: ['a1'] });
    gate.approve('a1');
    const settled = [await gate.settled('a1')];
    expect(guard.decide(settled)).toEqual({ action: 'send', autoTurns: 1 });
    expect(guard.decide(settled)).toEqual({ action: 'send', autoTurns: 1 });
  });

  it('counts every turn, even when a model reuses its call ids (and gets its old results replayed)', async () => {
    const { gate } = setup();
    const guard = createContinuationGuard({ maxAutoTurns: 2 });
    const decisions = [];
    for (let i = 0; i < 4; i++) {
      // The same id every turn: the gate never runs it again, but each turn still goes back to the model.
      const call = await gate.run({ id: 'call_0', ...ok });
      decisions.push(guard.decide([call]).action);
    }
    expect(decisions).toEqual(['send', 'send', 'stop', 'stop']);
  });

  it('stops after the same tool is rejected in 2 turns in a row, naming it', async () => {
    const { turn } = setup();
    const guard = createContinuationGuard({ maxAutoTurns: 10 });
    expect(guard.decide(await turn(bad))).toMatchObject({ action: 'send' });
    const decision = guard.decide(await turn(bad));
    expect(decision).toMatchObject({
      action: 'stop',
      reason: { code: 'repeated_rejections', tool: 'get_weather' },
    });
    if (decision.action === 'stop') expect(decision.notice).toMatch(/^Stop calling "get_weather"/);
  });

  it('counts rejections of a tool only while they are consecutive, and parallel ones in a turn once', async () => {
    const { turn } = setup();
    const guard = createContinuationGuard({ maxAutoTurns: 10 });
    expect(guard.decide(await turn(bad, bad))).toMatchObject({ action: 'send' });
    expect(guard.decide(await turn(ok))).toMatchObject({ action: 'send' });
    expect(guard.decide(await turn(bad))).toMatchObject({ action: 'send' });
    expect(guard.counts().rejections).toEqual({ get_weather: 1 });
  });

  it('starts counting again when a person speaks', async () => {
    const { turn } = setup();
    const guard = createContinuationGuard({ maxAutoTurns: 1 });
    guard.decide(await turn(ok));
    expect(guard.decide(await turn(ok))).toMatchObject({ action: 'stop' });
    guard.reset();
    expect(guard.decide(await turn(ok))).toEqual({ action: 'send', autoTurns: 1 });
  });

  it('has nothing to send for a turn without calls, and refuses limits that are not positive integers', () => {
    expect(createContinuationGuard().decide([])).toEqual({ action: 'done' });
    expect(() => createContinuationGuard({ maxAutoTurns: 0 })).toThrow(
      'createContinuationGuard: `maxAutoTurns` must be a positive integer (got 0).',
    );
  });
});
