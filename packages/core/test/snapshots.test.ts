/**
 * Records are immutable snapshots: what a record says (its input, output, reason, issues, history)
 * and what the audit trail says cannot be changed by app code or by a tool, and an approved call
 * runs exactly the input that was validated and shown.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolGate, defineTool, type ToolCallRecord } from '../src/index.ts';
import { createStore } from 'zustand/vanilla';
import { createShop, type Shop } from '@toolgate/test-utils';

/** Tries a change the way app code would; a frozen value refuses it (strict mode throws). */
function tryTo(change: () => void): void {
  try {
    change();
  } catch {
    // Refused, as it should be.
  }
}

const transferSchema = {
  type: 'object',
  properties: {
    cents: { type: 'integer', minimum: 1, maximum: 100 },
    to: { type: 'object', properties: { iban: { type: 'string' } } },
  },
  required: ['cents', 'to'],
} as const;

function transfer(seen: unknown[] = []) {
  return defineTool({
    name: 'transfer',
    inputSchema: transferSchema,
    needsApproval: true,
    execute: (input) => {
      seen.push(structuredClone(input));
      return { sent: input.cents };
    },
    commit: (state: Shop, output) => ({ balance_cents: state.balance_cents - output.sent }),
  });
}

describe('an approved call runs exactly the validated input', () => {
  it('ignores changes app code makes to record.input before approve, even beyond the schema', async () => {
    const seen: unknown[] = [];
    const store = createShop();
    const gate = createToolGate({ tools: [transfer(seen)], store });
    const call = gate.propose({ id: 'a', name: 'transfer', arguments: '{"cents":50,"to":{"iban":"DE1"}}' });
    expect(call.status).toBe('awaiting_approval');
    const input = call.input as { cents: number; to: { iban: string } };
    tryTo(() => {
      input.cents = 1_000_000;
    });
    tryTo(() => {
      input.to.iban = 'XX-ATTACKER';
    });
    tryTo(() => {
      (gate.get('a')?.input as { cents: number }).cents = 1_000_000;
    });
    expect(gate.approve('a')).toBe(true);
    const settled = await gate.settled('a');
    expect(seen).toEqual([{ cents: 50, to: { iban: 'DE1' } }]);
    expect(settled.input).toEqual({ cents: 50, to: { iban: 'DE1' } });
    expect(store.getState().balance_cents).toBe(9_950);
  });

  it('ignores a change to a Date a Standard Schema made, made before approve', async () => {
    const seen: number[] = [];
    const tool = defineTool({
      name: 'remind',
      inputSchema: z.object({ at: z.coerce.date() }),
      needsApproval: true,
      execute: (input) => {
        seen.push(input.at.getTime());
        return 'ok';
      },
    });
    const gate = createToolGate({ tools: [tool] });
    const call = gate.propose({ id: 'a', name: 'remind', arguments: '{"at":"2026-01-01T00:00:00Z"}' });
    const at = (call.input as { at: Date }).at;
    at.setTime(0);
    gate.approve('a');
    await gate.settled('a');
    expect(seen).toEqual([Date.parse('2026-01-01T00:00:00Z')]);
  });
});

describe('a tool cannot reach the record', () => {
  it('a tool that changes its input fails with a reason that says to copy it, and changes neither the record, the store nor the audit trail', async () => {
    const store = createStore(() => ({ sorted: [] as number[] }));
    const tool = defineTool({
      name: 'sorter',
      inputSchema: {
        type: 'object',
        properties: { items: { type: 'array', items: { type: 'integer' } } },
        required: ['items'],
      },
      execute: (input) => {
        input.items.sort((a, b) => a - b);
        input.items.push(99);
        return input.items;
      },
      commit: (_state, sorted) => ({ sorted }),
    });
    const gate = createToolGate({ tools: [tool], store });
    const call = await gate.run({ id: 'a', name: 'sorter', arguments: '{"items":[3,1,2]}' });
    expect(call).toMatchObject({
      status: 'failed',
      input: { items: [3, 1, 2] },
      reason: { code: 'tool_error' },
    });
    expect(call.reason?.message).toMatch(/^the tool threw: .*read only.*; a tool's input is frozen/);
    expect(call.reason?.message).toContain('structuredClone(input)');
    expect(gate.get('a')?.input).toEqual({ items: [3, 1, 2] });
    expect(store.getState()).toEqual({ sorted: [] });
    expect(gate.audit.export().map((event) => event.to)).toEqual([
      'pending',
      'validated',
      'executing',
      'failed',
    ]);
  });

  it('a tool that copies its input first may change the copy, and the record keeps what was validated', async () => {
    const tool = defineTool({
      name: 'sorter',
      inputSchema: {
        type: 'object',
        properties: { items: { type: 'array', items: { type: 'integer' } } },
        required: ['items'],
      },
      execute: (input) => {
        const mine = structuredClone(input);
        mine.items.sort((a, b) => a - b);
        mine.items.push(99);
        return mine.items;
      },
    });
    const gate = createToolGate({ tools: [tool] });
    const call = await gate.run({ id: 'a', name: 'sorter', arguments: '{"items":[3,1,2]}' });
    expect(call).toMatchObject({ status: 'committed', input: { items: [3, 1, 2] }, output: [1, 2, 3, 99] });
  });

  it('a tool that changes its output after returning it does not change the record', async () => {
    const kept = { total: 1, lines: [{ sku: 'a' }] };
    const tool = defineTool({ name: 'quote', inputSchema: { type: 'object' }, execute: async () => kept });
    const gate = createToolGate({ tools: [tool] });
    const call = await gate.run({ id: 'a', name: 'quote', arguments: '{}' });
    kept.total = 1_000;
    kept.lines.push({ sku: 'b' });
    expect(gate.get('a')).toMatchObject({ output: { total: 1, lines: [{ sku: 'a' }] } });
    expect(call.output).toEqual({ total: 1, lines: [{ sku: 'a' }] });
  });

  it('keeps an output that holds itself, or one value in two places', async () => {
    const shared = { sku: 'a' };
    const cyclic: Record<string, unknown> = { shared, again: shared };
    cyclic['self'] = cyclic;
    const tool = defineTool({ name: 'graph', inputSchema: { type: 'object' }, execute: () => cyclic });
    const call = await createToolGate({ tools: [tool] }).run({ name: 'graph', arguments: '{}' });
    const output = call.output as Record<string, unknown>;
    expect(call.status).toBe('committed');
    expect(output['self']).toBe(output);
    expect(output['again']).toEqual({ sku: 'a' });
    expect(output).not.toBe(cyclic);
  });

  it("keeps an output's own keys as they were returned: __proto__ as a key, symbol keys, keys a page gave Object.prototype a setter for", async () => {
    const tag = Symbol('tag');
    const returned = JSON.parse('{"__proto__":{"admin":true},"total":2,"toString":"kept"}') as Record<
      PropertyKey,
      unknown
    >;
    returned[tag] = 'marked';
    const tool = defineTool({ name: 'odd', inputSchema: { type: 'object' }, execute: () => returned });
    Object.defineProperty(Object.prototype, 'total', { set() {}, configurable: true });
    try {
      const call = await createToolGate({ tools: [tool] }).run({ name: 'odd', arguments: '{}' });
      const output = call.output as Record<PropertyKey, unknown>;
      expect(call.status).toBe('committed');
      expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(output, '__proto__')?.value).toEqual({ admin: true });
      expect(Object.getOwnPropertyDescriptor(output, 'total')?.value).toBe(2);
      expect(Object.keys(output)).toEqual(['__proto__', 'total', 'toString']);
      expect(output[tag]).toBe('marked');
      expect(Object.isFrozen(output)).toBe(true);
      expect(output).not.toBe(returned);
    } finally {
      delete (Object.prototype as { total?: unknown }).total;
    }
  });
});

describe('app code cannot change what a record or the audit trail says', () => {
  function settledCalls() {
    const gate = createToolGate({
      tools: [
        defineTool({
          name: 'quote',
          inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
          execute: () => ({ total: 5, lines: [1, 2] }),
        }),
      ],
    });
    const committed = gate.propose({ id: 'ok', name: 'quote', arguments: '{"n":1}' });
    const rejected = gate.propose({ id: 'bad', name: 'quote', arguments: '{"n":"x"}' });
    return { gate, committed, rejected };
  }

  const attempts: [string, (call: ToolCallRecord) => void][] = [
    ['the status', (call) => Object.assign(call, { status: 'committed' })],
    ['the output', (call) => ((call.output as { total: number }).total = 0)],
    ['a list in the output', (call) => (call.output as number[][] & { lines: number[] }).lines.push(3)],
    ['the input', (call) => ((call.input as { n: unknown }).n = 2)],
    ['the reason', (call) => Object.assign(call.reason ?? {}, { code: 'unknown_tool', message: 'changed' })],
    ['an issue', (call) => Object.assign(call.reason?.issues?.[0] ?? {}, { message: 'changed' })],
    [
      'the issues',
      (call) => (call.reason?.issues as unknown[] | undefined)?.push({ path: '', message: 'added' }),
    ],
    ['the history', (call) => (call.history as unknown[]).push({ status: 'committed', at: 0 })],
    ['a step of the history', (call) => Object.assign(call.history[0] ?? {}, { status: 'failed' })],
  ];

  it.each(attempts)('cannot change %s of a record', (_what, change) => {
    const { gate, committed, rejected } = settledCalls();
    const before = JSON.stringify([committed, rejected]);
    for (const call of [committed, rejected, gate.get('ok'), gate.get('bad')])
      if (call) tryTo(() => change(call));
    expect(JSON.stringify([gate.get('ok'), gate.get('bad')])).toBe(before);
  });

  it('cannot change an audit event, its reason or its issues', () => {
    const { gate } = settledCalls();
    const before = JSON.stringify(gate.audit.export());
    let told = 0;
    gate.audit.subscribe((event) => {
      told++;
      tryTo(() => Object.assign(event, { to: 'committed' }));
    });
    gate.propose({ id: 'bad2', name: 'quote', arguments: '{"n":"y"}' });
    expect(told).toBe(2);
    for (const event of gate.audit.export()) {
      tryTo(() => Object.assign(event, { to: 'committed', from: null }));
      tryTo(() => Object.assign(event.reason ?? {}, { message: 'changed' }));
      tryTo(() => (event.reason?.issues as unknown[] | undefined)?.splice(0));
    }
    expect(JSON.stringify(gate.audit.export().slice(0, -2))).toBe(before);
    expect(gate.audit.export().at(-1)).toMatchObject({
      callId: 'bad2',
      from: 'pending',
      to: 'rejected',
      reason: { code: 'invalid_arguments' },
    });
  });
});
