import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { createToolGate, defineTool } from '../src/index.ts';

describe('smoke', () => {
  it('commits a valid charge', async () => {
    const store = createStore(() => ({ balance: 10_000 }));
    const charge = defineTool({
      name: 'charge',
      inputSchema: {
        type: 'object',
        properties: { amount_cents: { type: 'integer', minimum: 0 }, currency: { enum: ['USD', 'EUR'] } },
        required: ['amount_cents', 'currency'],
        additionalProperties: false,
      },
      execute: async (input) => ({ charged: input.amount_cents }),
      commit: (state: { balance: number }, output) => ({ balance: state.balance - output.charged }),
    });
    const gate = createToolGate({ tools: [charge], store });
    const call = await gate.run({ name: 'charge', arguments: '{"amount_cents":1250,"currency":"USD"}' });
    expect(call.status).toBe('committed');
    expect(store.getState().balance).toBe(8750);
    const bad = await gate.run({ name: 'charge', arguments: '{"amount_cents":"12.50","currency":"USD"}' });
    expect(bad.status).toBe('rejected');
    console.log(gate.toolResult(bad.id, 'openai-chat'));
    console.log(gate.audit.export());
  });
});
