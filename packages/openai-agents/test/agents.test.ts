import { defineTool, inputHash } from '@toolgate/core';
import { Agent, run, RunState } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFakeClock } from '@toolgate/test-utils';
import { toolgateAgents } from '../src/index.ts';
import { paymentsGate } from './support/gate.ts';
import { scriptedModel } from './support/model.ts';

const bob = { to: 'acct_bob', amount_cents: 1250 };
const payBob = (id = 'call_pay', args: unknown = bob) => ({
  call: { id, name: 'pay', arguments: JSON.stringify(args) },
});

async function interrupted(gate: Awaited<ReturnType<typeof paymentsGate>>['gate'], args: unknown = bob) {
  const { model, toolOutputs, requests } = scriptedModel(
    payBob('call_pay', args),
    { text: 'Paid.' },
    { text: 'Paid again?' },
  );
  const gated = toolgateAgents(gate, { session: 'chat_1', principal: 'alice' });
  const agent = new Agent({ name: 'Payer', instructions: 'Pay when asked.', model, tools: gated.tools });
  const result = await run(agent, 'Pay Bob 12.50');
  return { gated, agent, result, saved: result.state.toString(), toolOutputs, requests };
}

describe('toolgateAgents under the OpenAI Agents SDK', () => {
  it('puts a call that needs approval to a person as an interruption, and it waits in the ledger', async () => {
    const { gate, payments } = await paymentsGate();
    const { result } = await interrupted(gate);
    expect(result.interruptions.map((item) => item.name)).toEqual(['pay']);
    expect(await gate.get('call_pay')).toMatchObject({ status: 'awaiting_approval', input: bob });
    expect(payments).toEqual([]);
  });

  it("runs a call the SDK's own approve() approved through the ledger, and a RunState resumed twice runs it once", async () => {
    const { gate, payments } = await paymentsGate();
    const { agent, saved, toolOutputs } = await interrupted(gate);

    for (let round = 0; round < 2; round++) {
      const state = await RunState.fromString(agent, saved);
      for (const item of state.getInterruptions()) state.approve(item);
      const resumed = await run(agent, state);
      expect(resumed.finalOutput).toMatch(/Paid/);
      expect(toolOutputs()['call_pay']).toContain('rcpt_1');
    }
    expect(payments).toEqual([bob]);
    expect(await gate.get('call_pay')).toMatchObject({ status: 'committed', output: { receipt: 'rcpt_1' } });
  });

  it("carries the ledger's approval into a stored RunState: approved in toolgate, the resumed run answers the ledger's output", async () => {
    const { gate, payments } = await paymentsGate();
    const { agent, saved, toolOutputs } = await interrupted(gate);
    expect(await gate.approve('call_pay', { principal: 'alice', inputHash: await inputHash(bob) })).toEqual({
      ok: true,
    });
    await gate.settled('call_pay');

    const state = await RunState.fromString(agent, saved);
    expect(await toolgateAgents(gate, { session: 'chat_1', principal: 'alice' }).resume(state)).toEqual({
      approved: ['call_pay'],
      rejected: [],
      waiting: [],
    });
    await run(agent, state);
    expect(toolOutputs()['call_pay']).toContain('rcpt_1');
    expect(payments).toEqual([bob]);
  });

  it("carries the ledger's denial into the RunState: the model reads the denial, nothing runs", async () => {
    const { gate, payments } = await paymentsGate();
    const { agent, saved, toolOutputs } = await interrupted(gate);
    await gate.deny('call_pay', { principal: 'alice', reason: 'not this month' });

    const state = await RunState.fromString(agent, saved);
    expect(
      (await toolgateAgents(gate, { session: 'chat_1', principal: 'alice' }).resume(state)).rejected,
    ).toEqual(['call_pay']);
    await run(agent, state);
    expect(toolOutputs()['call_pay']).toContain('approval_denied');
    expect(payments).toEqual([]);
  });

  it('expires a call nobody decides, and the resumed RunState tells the model so', async () => {
    const clock = createFakeClock(Date.now());
    const { gate, payments } = await paymentsGate({ clock, approvalTtlMs: 60_000 });
    const { agent, saved, toolOutputs } = await interrupted(gate);
    const gated = toolgateAgents(gate, { session: 'chat_1', principal: 'alice' });
    expect((await gated.resume(await RunState.fromString(agent, saved))).waiting).toEqual(['call_pay']);

    clock.advance(60_001);
    await gate.recover();
    expect(await gate.get('call_pay')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'approval_expired' },
    });
    const state = await RunState.fromString(agent, saved);
    expect((await gated.resume(state)).rejected).toEqual(['call_pay']);
    await run(agent, state);
    expect(toolOutputs()['call_pay']).toContain('approval_expired');
    // An approval that comes after is refused, and still nothing runs.
    const late = await RunState.fromString(agent, saved);
    for (const item of late.getInterruptions()) late.approve(item);
    await run(agent, late);
    expect(toolOutputs()['call_pay']).toContain('approval_expired');
    expect(payments).toEqual([]);
  });

  it('never puts a malformed call to a person: "12.50" for integer cents is refused with its path, and the model is told', async () => {
    const { gate, payments } = await paymentsGate();
    const { result, toolOutputs } = await interrupted(gate, { to: 'acct_bob', amount_cents: '12.50' });
    expect(result.interruptions).toEqual([]);
    expect(toolOutputs()['call_pay']).toContain('rejected (invalid_arguments)');
    expect(toolOutputs()['call_pay']).toContain('/amount_cents');
    expect(await gate.get('call_pay')).toMatchObject({
      status: 'rejected',
      reason: { code: 'invalid_arguments' },
    });
    expect(payments).toEqual([]);
  });

  it('refuses an approval of a RunState whose arguments were changed after the person saw them, and runs nothing', async () => {
    const { gate, payments } = await paymentsGate();
    const { agent, saved, toolOutputs } = await interrupted(gate);
    const tampered = saved.replaceAll('acct_bob', 'acct_mallory');
    expect(tampered).not.toBe(saved);
    const state = await RunState.fromString(agent, tampered);
    for (const item of state.getInterruptions()) state.approve(item);
    await run(agent, state);
    expect(toolOutputs()['call_pay']).toContain('refused (stale)');
    expect(payments).toEqual([]);
    expect(await gate.get('call_pay')).toMatchObject({ status: 'awaiting_approval', input: bob });
  });

  it("gives another user's RunState nothing of the call, and runs nothing for them", async () => {
    const { gate, payments } = await paymentsGate();
    const { agent, saved, toolOutputs } = await interrupted(gate);
    const mallory = toolgateAgents(gate, { session: 'chat_1', principal: 'mallory' });
    const theirs = new Agent({
      name: 'Payer',
      instructions: 'Pay when asked.',
      model: agent.model,
      tools: mallory.tools,
    });
    const state = await RunState.fromString(theirs, saved);
    expect(await mallory.resume(state)).toEqual({ approved: [], rejected: [], waiting: [] });
    for (const item of state.getInterruptions()) state.approve(item);
    await run(theirs, state);
    expect(toolOutputs()['call_pay']).not.toContain('acct_bob');
    expect(payments).toEqual([]);
    expect(await gate.get('call_pay')).toMatchObject({ status: 'awaiting_approval' });
  });
});

describe('a tool whose Standard Schema transforms its input', () => {
  it("is approved by the SDK's approve() with the arguments the model sent, and not with others", async () => {
    const notes: string[] = [];
    const note = defineTool({
      name: 'note',
      description: 'Save a note. A person approves each one.',
      inputSchema: z.object({ text: z.string().trim(), priority: z.number().int().default(1) }),
      needsApproval: true,
      execute: ({ text, priority }) => {
        notes.push(`${priority}:${text}`);
        return { saved: text };
      },
    });
    const { gate } = await paymentsGate({ tools: [note] });
    const gated = toolgateAgents(gate, { session: 'chat_1', principal: 'alice' });
    const call = (id: string, text: string) => ({
      call: { id, name: 'note', arguments: JSON.stringify({ text }) },
    });
    for (const [id, text] of [
      ['call_same', '  buy milk '],
      ['call_changed', '  buy milk '],
    ] as const) {
      const { model } = scriptedModel(call(id, text), { text: 'Saved.' });
      const agent = new Agent({ name: 'Notes', model, tools: gated.tools });
      const saved = (await run(agent, 'Note: buy milk')).state.toString();
      const state = await RunState.fromString(
        agent,
        id === 'call_same' ? saved : saved.replaceAll('  buy milk ', '  buy beer '),
      );
      for (const item of state.getInterruptions()) state.approve(item);
      await run(agent, state);
    }
    expect(notes).toEqual(['1:buy milk']);
    expect(await gate.get('call_changed')).toMatchObject({
      status: 'awaiting_approval',
      input: { text: 'buy milk', priority: 1 },
    });
  });
});
