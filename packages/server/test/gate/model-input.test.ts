/**
 * The browser gate's garbage and hostile proposals, through the server gate: the same decision,
 * reason code, message and issues, with the ledger holding the refusal.
 */
import { cancel, createToolGate, defineTool, type SettledCall, type ToolDefinition } from '@toolgate/core';
import { chargeSchema, DEFECTS } from '@toolgate/test-utils';
import { createStore } from 'zustand/vanilla';
import { expect, it } from 'vitest';
import { createServerGate } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

function tools(): ToolDefinition[] {
  return [
    defineTool({
      name: 'charge',
      inputSchema: chargeSchema,
      execute: async (input) => ({ amount_cents: input.amount_cents }),
    }),
    defineTool({
      name: 'needs_to_string',
      inputSchema: { type: 'object', required: ['toString'] },
      execute: () => 'ran',
    }),
    defineTool({
      name: 'throws',
      inputSchema: { type: 'object' },
      execute: () => {
        throw new Error('carrier said 503');
      },
    }),
    defineTool({
      name: 'rejects',
      inputSchema: { type: 'object' },
      execute: async () => {
        throw new Error('timed out upstream');
      },
    }),
    defineTool({
      name: 'declines',
      inputSchema: { type: 'object' },
      execute: async () => cancel('the store is closed'),
    }),
    defineTool({
      name: 'cancel_order',
      inputSchema: { type: 'object' },
      execute: async () => ({ cancelled: true, order: 7 }),
    }),
    defineTool({
      name: 'open',
      inputSchema: { type: 'object', additionalProperties: true },
      execute: (input) => Object.keys(input).length,
    }),
    ...DEFECTS.map((defect) => defect.tool()),
  ].filter((tool, index, all) => all.findIndex((other) => other.name === tool.name) === index);
}

const charge = (value: unknown) => ({ name: 'charge', arguments: JSON.stringify(value) });
let deep = '';
for (let i = 0; i < 100_000; i++) deep += '[';

const hostileGetter = {
  name: 'charge',
  get arguments(): unknown {
    throw new Error('hostile getter');
  },
};
const cyclic: Record<string, unknown> = { amount_cents: 1, currency: 'USD' };
cyclic['self'] = cyclic;

const PROPOSALS: readonly (readonly [string, unknown])[] = [
  ['a valid charge', charge({ amount_cents: 1250, currency: 'USD' })],
  ['cents as a string', charge({ amount_cents: '12.50', currency: 'USD' })],
  ['cents as a float', charge({ amount_cents: 12.5, currency: 'USD' })],
  ['cents as null', charge({ amount_cents: null, currency: 'USD' })],
  ['negative cents', charge({ amount_cents: -5, currency: 'USD' })],
  ['an object for the currency', charge({ amount_cents: 1, currency: { x: 1 } })],
  [
    'double-encoded arguments',
    { name: 'charge', arguments: JSON.stringify(JSON.stringify({ amount_cents: 1, currency: 'USD' })) },
  ],
  ['arguments already an object', { name: 'charge', arguments: { amount_cents: 1, currency: 'EUR' } }],
  ['truncated JSON', { name: 'charge', arguments: '{"amount_cents":12' }],
  ['a number', 42],
  ['null', null],
  ['an array', [1, 2]],
  ['a tool that throws', { name: 'throws', arguments: '{}' }],
  ['an async tool that rejects', { name: 'rejects', arguments: '{}' }],
  ['a tool that cancels', { name: 'declines', arguments: '{}' }],
  ['an output that holds cancelled: true', { name: 'cancel_order', arguments: '{}' }],
  ['an inherited key counted as present', { name: 'needs_to_string', arguments: '{}' }],
  ['the tool name constructor', { name: 'constructor', arguments: '{}' }],
  ['the tool name __proto__', { name: '__proto__', arguments: '{}' }],
  ['a __proto__ key in the arguments', { name: 'open', arguments: '{"__proto__":{"polluted":true}}' }],
  [
    '20 MB of arguments',
    { name: 'charge', arguments: `{"amount_cents":1,"currency":"USD","pad":"${'x'.repeat(20_000_000)}"}` },
  ],
  ['100,000-deep nesting', { name: 'open', arguments: deep }],
  ['1e400 as text', { name: 'charge', arguments: '{"amount_cents":1e400,"currency":"USD"}' }],
  ['a throwing getter', hostileGetter],
  ['a cyclic object', { name: 'open', arguments: cyclic }],
  [
    'an OpenAI Chat tool call',
    {
      id: 'call_x',
      type: 'function',
      function: { name: 'charge', arguments: '{"amount_cents":5,"currency":"USD"}' },
    },
  ],
  [
    'an Anthropic tool_use block',
    { type: 'tool_use', id: 'toolu_x', name: 'charge', input: { amount_cents: '5', currency: 'USD' } },
  ],
  [
    'a Gemini functionCall part',
    { functionCall: { name: 'charge', args: { amount_cents: 5, currency: 'GBP' } } },
  ],
  ['MCP tools/call params', { name: 'charge', arguments: { amount_cents: 5 } }],
  [
    'an AI SDK tool-call part',
    {
      type: 'tool-call',
      toolCallId: 'ai_x',
      toolName: 'charge',
      input: { amount_cents: 5, currency: 'USD' },
    },
  ],
  ...DEFECTS.map((defect) => [defect.defect, { name: defect.name, arguments: defect.args }] as const),
];

const decision = (call: SettledCall) => ({ status: call.status, reason: call.reason, output: call.output });

describeLedgers('model input through the server gate', (target) => {
  it('answers every garbage and hostile proposal exactly as the browser gate does, and stores the answer', async () => {
    const ledger = await (await target.fresh()).open();
    const server = createServerGate({ tools: tools(), ledger, recover: false });
    const browser = createToolGate({
      tools: tools(),
      store: createStore(() => ({})),
      onError: () => undefined,
    });
    for (const [what, proposal] of PROPOSALS) {
      const expected = decision(await browser.run(proposal));
      const answered = await server.run(proposal, { session: 'model', principal: 'alice' });
      expect({ what, ...decision(answered) }).toEqual({ what, ...expected });
      expect({ what, ...decision((await server.get(answered.id)) as SettledCall) }).toEqual({
        what,
        ...expected,
      });
    }
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(await server.verify()).toMatchObject({ ok: true });
    await server.close();
  });
});
