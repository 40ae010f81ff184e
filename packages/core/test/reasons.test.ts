/**
 * A reason is text a model reads and a person sees: whatever app code passes as a reason, the
 * record holds a string, and the answer to the model says it in words.
 */
import { describe, expect, it } from 'vitest';
import { cancel, createToolGate, defineTool, type Reason } from '../src/index.ts';
import { createPending, transition } from '../src/kit.ts';

const wait = defineTool({
  name: 'wait',
  inputSchema: { type: 'object' },
  needsApproval: true,
  execute: () => 'ran',
});
const hang = defineTool({
  name: 'hang',
  inputSchema: { type: 'object' },
  execute: () => new Promise(() => {}),
});

function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

const notText: [string, unknown, string][] = [
  ['an object', { code: 42 }, '{"code":42}'],
  ['a number', 42, '42'],
  ['an Error', new Error('card expired'), 'card expired'],
  [
    'an element-like object',
    { $$typeof: Symbol.for('react.element'), type: 'img', props: { src: 'x' } },
    '{"type":"img","props":{"src":"x"}}',
  ],
  ['a BigInt', 10n, '10'],
];

describe('reasons are text', () => {
  it.each(notText)('cancel with %s records it as text', (_what, reason, text) => {
    const gate = createToolGate({ tools: [hang] });
    gate.propose({ id: 'a', name: 'hang', arguments: '{}' });
    expect(gate.cancel('a', reason as string)).toBe(true);
    expect(gate.get('a')?.reason).toEqual({ code: 'user_cancelled', message: text });
    expect(gate.toolResult('a', 'openai-chat').content).toContain(text);
    expect(gate.toolResult('a', 'openai-chat').content).not.toContain('[object Object]');
  });

  it.each(notText)('deny with %s records it as text', (_what, reason, text) => {
    const gate = createToolGate({ tools: [wait] });
    gate.propose({ id: 'a', name: 'wait', arguments: '{}' });
    expect(gate.deny('a', reason as string)).toBe(true);
    expect(gate.get('a')?.reason).toEqual({ code: 'approval_denied', message: text });
    expect(gate.toolResult('a', 'ai-sdk').output).toEqual({ type: 'execution-denied', reason: text });
  });

  it.each(notText)('a tool that cancels with %s is recorded with it as text', async (_what, reason, text) => {
    const tool = defineTool({
      name: 'stop',
      inputSchema: { type: 'object' },
      execute: () => cancel(reason as string),
    });
    const call = await createToolGate({ tools: [tool] }).run({ name: 'stop', arguments: '{}' });
    expect(call.reason).toEqual({ code: 'tool_cancelled', message: text });
  });

  it('a reason that cannot even be turned into a string is still text', () => {
    const gate = createToolGate({ tools: [hang] });
    gate.propose({ id: 'a', name: 'hang', arguments: '{}' });
    expect(gate.cancel('a', revoked() as unknown as string)).toBe(true);
    expect(typeof gate.get('a')?.reason?.message).toBe('string');
  });

  it('transition keeps only text in a reason, whoever sends the event', () => {
    const pending = createPending({
      id: 'a',
      name: 't',
      source: 'json',
      generatedId: false,
      turn: undefined,
      at: 0,
    });
    const reason = {
      code: 'invalid_json',
      message: { html: '<b>x</b>' },
      issues: [{ path: 7, message: { no: 1 } }],
    } as unknown as Reason<'invalid_json'>;
    const next = transition(pending, { type: 'reject', reason }, 1);
    expect(next?.reason).toEqual({
      code: 'invalid_json',
      message: '{"html":"<b>x</b>"}',
      issues: [{ path: '', message: '{"no":1}' }],
    });
    expect(next?.history.at(-1)?.reason).toBe(next?.reason);
  });
});
