/**
 * Every row of the reference fixture's hard-input table, through the public API. The fixture got
 * the rows marked "wrong" wrong; each test here says what a user observes instead.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cancel, createToolGate, defineTool, type ToolDefinition } from '../src/index.ts';
import { args, chargeTool, createShop, watchStore } from '@toolgate/test-utils';

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

function setup() {
  const store = createShop();
  const before = store.getState();
  const updates = watchStore(store);
  const gate = createToolGate({ tools: [chargeTool()], store });
  return { store, before, updates, gate };
}

describe('the reference fixture, done right', () => {
  it('commits a valid charge, once', async () => {
    const { store, gate, updates } = setup();
    const call = await gate.run({ name: 'charge', arguments: args({ amount_cents: 1250, currency: 'USD' }) });
    expect(call.status).toBe('committed');
    expect(updates).toHaveLength(1);
    expect(store.getState().balance_cents).toBe(10_000 - 1250);
  });

  it.each([
    ['a string for cents', '12.50', 'must be integer (got string "12.50")'],
    ['a float for an integer', 12.5, 'must be integer (got number 12.5)'],
    ['null', null, 'must be integer (got null)'],
    ['a negative amount', -5, 'must be >= 0 (got integer -5)'],
  ])('rejects %s at /amount_cents and leaves the store alone', async (_what, value, message) => {
    const { store, before, gate, updates } = setup();
    const call = await gate.run({
      name: 'charge',
      arguments: args({ amount_cents: value, currency: 'USD' }),
    });
    expect(call.status).toBe('rejected');
    expect(call.reason?.code).toBe('invalid_arguments');
    expect(call.reason?.issues).toContainEqual(expect.objectContaining({ path: '/amount_cents', message }));
    expect(store.getState()).toBe(before);
    expect(updates).toHaveLength(0);
  });

  it('rejects an object where a currency string was wanted', async () => {
    const { store, before, gate } = setup();
    const call = await gate.run({ name: 'charge', arguments: args({ amount_cents: 1, currency: { x: 1 } }) });
    expect(call.reason?.code).toBe('invalid_arguments');
    expect(call.reason?.issues?.map((i) => i.path)).toContain('/currency');
    expect(store.getState()).toBe(before);
  });

  it('rejects double-encoded arguments by default', async () => {
    const { gate } = setup();
    const call = await gate.run({
      name: 'charge',
      arguments: JSON.stringify(args({ amount_cents: 1, currency: 'USD' })),
    });
    expect(call.status).toBe('rejected');
    expect(call.reason?.code).toBe('invalid_json');
    expect(call.reason?.message).toMatch(/double-encoded/);
  });

  it('repairs double-encoded arguments only for a tool that opted in, and records it', async () => {
    const store = createShop();
    const tool: ToolDefinition = { ...chargeTool(), repair: ['double_encoded'] };
    const gate = createToolGate({ tools: [tool], store });
    const call = await gate.run({
      name: 'charge',
      arguments: JSON.stringify(args({ amount_cents: 1, currency: 'USD' })),
    });
    expect(call.status).toBe('committed');
    expect(call.repairs).toEqual([expect.objectContaining({ kind: 'double_encoded' })]);
    expect(gate.audit.export().find((e) => e.to === 'validated')?.repairs).toEqual(call.repairs);
  });

  it.each([
    [
      'Anthropic tool_use',
      { type: 'tool_use', id: 'toolu_1', name: 'charge', input: { amount_cents: 100, currency: 'EUR' } },
    ],
    [
      'Gemini functionCall',
      { functionCall: { name: 'charge', args: { amount_cents: 100, currency: 'EUR' } } },
    ],
    ['MCP tools/call params', { name: 'charge', arguments: { amount_cents: 100, currency: 'EUR' } }],
    [
      'AI SDK tool-call',
      {
        type: 'tool-call',
        toolCallId: 'c1',
        toolName: 'charge',
        input: { amount_cents: 100, currency: 'EUR' },
      },
    ],
  ])('accepts and validates arguments that are already an object (%s)', async (_what, proposal) => {
    const { store, gate } = setup();
    const call = await gate.run(proposal);
    expect(call.status).toBe('committed');
    expect(store.getState().balance_cents).toBe(9_900);
  });

  it('rejects truncated JSON with invalid_json', async () => {
    const { gate, store, before } = setup();
    const call = await gate.run({ name: 'charge', arguments: '{"amount_cents": 12' });
    expect(call.reason?.code).toBe('invalid_json');
    expect(call.reason?.message).toMatch(/not valid JSON/);
    expect(store.getState()).toBe(before);
  });

  it.each([[42], [undefined], [null], [true], [['charge']], [Symbol('x')], [() => 1]])(
    'answers raw input %s with a rejection, never a throw',
    (input) => {
      const { gate } = setup();
      const call = gate.propose(input);
      expect(call.status).toBe('rejected');
      expect(call.reason?.code).toBe('invalid_shape');
    },
  );

  it('fails a tool that throws synchronously, commits nothing', async () => {
    const store = createShop();
    const before = store.getState();
    const tool = defineTool({
      name: 'charge',
      inputSchema: { type: 'object' },
      execute: () => {
        throw new Error('card declined');
      },
      commit: () => ({ balance_cents: 0 }),
    });
    const gate = createToolGate({ tools: [tool], store });
    const call = gate.propose({ name: 'charge', arguments: '{}' });
    expect(call.status).toBe('failed');
    expect(call.reason).toMatchObject({ code: 'tool_error', message: 'the tool threw: card declined' });
    expect(store.getState()).toBe(before);
  });

  it('fails an async tool that rejects, commits nothing, leaves no unhandled rejection', async () => {
    const store = createShop();
    const before = store.getState();
    const tool = defineTool({
      name: 'charge',
      inputSchema: { type: 'object' },
      execute: async () => Promise.reject(new Error('gateway down')),
      commit: () => ({ balance_cents: 0 }),
    });
    const gate = createToolGate({ tools: [tool], store });
    const call = await gate.run({ name: 'charge', arguments: '{}' });
    expect(call.status).toBe('failed');
    expect(call.reason?.code).toBe('tool_error');
    expect(store.getState()).toBe(before);
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });

  it('cancels when an async tool resolves to cancel(reason), and commits an output that merely holds cancelled: true', async () => {
    const store = createShop();
    const before = store.getState();
    const blocked = defineTool({
      name: 'charge',
      inputSchema: { type: 'object' },
      execute: async () => cancel('location blocked by app policy'),
      commit: () => ({ balance_cents: 0 }),
    });
    const cancelOrder = defineTool({
      name: 'cancel_order',
      inputSchema: { type: 'object' },
      execute: async () => ({ cancelled: true, order: 'o_1' }),
      commit: (state: { balance_cents: number }) => ({ balance_cents: state.balance_cents + 1 }),
    });
    const gate = createToolGate({ tools: [blocked, cancelOrder], store });
    const call = await gate.run({ name: 'charge', arguments: '{}' });
    expect(call.status).toBe('cancelled');
    expect(call.reason).toEqual({ code: 'tool_cancelled', message: 'location blocked by app policy' });
    expect(store.getState()).toBe(before);
    const order = await gate.run({ name: 'cancel_order', arguments: '{}' });
    expect(order.status).toBe('committed');
    expect(store.getState().balance_cents).toBe(before.balance_cents + 1);
  });

  it('does not let an inherited property satisfy required', async () => {
    const tool = defineTool({
      name: 't',
      inputSchema: { type: 'object', required: ['toString'] },
      execute: () => 'ran',
    });
    const gate = createToolGate({ tools: [tool] });
    const call = await gate.run({ name: 't', arguments: '{}' });
    expect(call.reason?.code).toBe('invalid_arguments');
    expect(call.reason?.issues).toEqual([{ path: '/toString', message: 'is required', keyword: 'required' }]);
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'treats the name %s as an unknown tool, even with no tools',
    async (name) => {
      const gate = createToolGate({ tools: [] });
      const call = await gate.run({ name, arguments: '{}' });
      expect(call.status).toBe('rejected');
      expect(call.reason?.code).toBe('unknown_tool');
    },
  );

  it('refuses a smuggled __proto__ key even where extra keys are allowed, and Object.prototype stays clean', async () => {
    let ran = false;
    const tool = defineTool({
      name: 'open',
      inputSchema: { type: 'object', additionalProperties: true },
      execute: (input) => {
        ran = true;
        return Object.assign({}, input);
      },
    });
    const gate = createToolGate({ tools: [tool] });
    const call = await gate.run({ name: 'open', arguments: '{"a":1,"__proto__":{"polluted":true}}' });
    expect(call.status).toBe('rejected');
    expect(call.reason?.issues).toEqual([expect.objectContaining({ path: '/__proto__' })]);
    expect(ran).toBe(false);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('rejects a 20 MB argument string as too_large before parsing it', async () => {
    const { gate, store, before } = setup();
    const huge = '{"amount_cents":1,"currency":"USD","pad":"' + 'x'.repeat(20 * 1024 * 1024) + '"}';
    const parse = JSON.parse;
    let parsed = 0;
    JSON.parse = ((text: string, ...rest: []) => {
      parsed += text.length > 1_000_000 ? 1 : 0;
      return parse(text, ...rest);
    }) as typeof JSON.parse;
    try {
      const call = gate.propose({ name: 'charge', arguments: huge });
      expect(call.reason?.code).toBe('too_large');
    } finally {
      JSON.parse = parse;
    }
    expect(parsed).toBe(0);
    expect(store.getState()).toBe(before);
  });

  it('rejects 100,000-deep nesting as too_deep, with no stack overflow', async () => {
    // The size limit is raised so that depth, not size, is what refuses the object form.
    const gate = createToolGate({
      tools: [chargeTool()],
      store: createShop(),
      limits: { maxArgumentChars: 10_000_000 },
    });
    const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    const call = gate.propose({ name: 'charge', arguments: deep });
    expect(call.reason?.code).toBe('too_deep');
    const array = gate.propose({ name: 'charge', arguments: '['.repeat(100_000) });
    expect(array.reason?.code).toBe('too_deep');
  });
});
