import { describe, expect, it, vi } from 'vitest';
import { createToolGate, defineTool } from '../src/index.ts';
import { createShop, watchStore, type Shop } from '@toolgate/test-utils';

function counted() {
  const execute = vi.fn(async (input: { cents?: number }) => ({ cents: input.cents ?? 1 }));
  const tool = defineTool({
    name: 'pay',
    inputSchema: { type: 'object', properties: { cents: { type: 'integer' } } },
    execute,
    commit: (state: Shop, output) => ({ balance_cents: state.balance_cents - output.cents }),
  });
  const store = createShop();
  return { execute, store, updates: watchStore(store), gate: createToolGate({ tools: [tool], store }) };
}

describe('exactly once per call id', () => {
  it('returns the same call for a duplicate that arrives at once', () => {
    const { gate, execute } = counted();
    const first = gate.propose({ id: 'c1', name: 'pay', arguments: '{"cents":5}' });
    const again = gate.propose({ id: 'c1', name: 'pay', arguments: '{"cents":5}' });
    expect(again).toBe(first);
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('runs once when the same id is proposed concurrently, in any shape, with any arguments', async () => {
    const { gate, execute, updates, store } = counted();
    const results = await Promise.all([
      gate.run({ id: 'c1', name: 'pay', arguments: '{"cents":5}' }),
      gate.run({ type: 'tool_use', id: 'c1', name: 'pay', input: { cents: 999 } }),
      gate.run({ id: 'c1', type: 'function', function: { name: 'pay', arguments: '{"cents":5}' } }),
    ]);
    expect(new Set(results)).toEqual(new Set([results[0]]));
    expect(execute).toHaveBeenCalledTimes(1);
    expect(updates).toHaveLength(1);
    expect(store.getState().balance_cents).toBe(9_995);
  });

  it('returns the settled call, and runs nothing, for a duplicate after it settled', async () => {
    const { gate, execute, updates } = counted();
    const settled = await gate.run({ id: 'c1', name: 'pay', arguments: '{}' });
    expect(gate.propose({ id: 'c1', name: 'pay', arguments: '{}' })).toBe(settled);
    expect(await gate.run({ id: 'c1', name: 'pay', arguments: '{}' })).toBe(settled);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(updates).toHaveLength(1);
  });

  it('does not re-run a rejected call when a corrected duplicate reuses its id', async () => {
    const { gate, execute } = counted();
    const bad = await gate.run({ id: 'c1', name: 'pay', arguments: '{"cents":"5"}' });
    const again = await gate.run({ id: 'c1', name: 'pay', arguments: '{"cents":5}' });
    expect(again).toBe(bad);
    expect(execute).not.toHaveBeenCalled();
  });

  it('keeps calls with different ids apart', async () => {
    const { gate, execute } = counted();
    await Promise.all([
      gate.run({ id: 'a', name: 'pay', arguments: '{}' }),
      gate.run({ id: 'b', name: 'pay', arguments: '{}' }),
    ]);
    expect(execute).toHaveBeenCalledTimes(2);
  });
});
