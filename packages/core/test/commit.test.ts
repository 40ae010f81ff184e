/**
 * Committed means in the store: a call is `committed` exactly when its change is in the app's
 * store, `commit` must hand back a plain object, and a cancel during the write is refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { createToolGate, defineTool, type ToolGate } from '../src/index.ts';

interface Ledger {
  readonly committed: readonly string[];
}

function ledger() {
  return createStore<Ledger>()(() => ({ committed: [] }));
}

/** A tool whose commit appends its call id, or returns whatever `partial` makes of the state. */
function writer(
  name: string,
  options: {
    sync?: boolean;
    approval?: boolean;
    partial?: ((state: Ledger, id: string) => unknown) | undefined;
  } = {},
) {
  const partial =
    options.partial ?? ((state: Ledger, id: string) => ({ committed: [...state.committed, id] }));
  return defineTool({
    name,
    inputSchema: { type: 'object' },
    needsApproval: options.approval ?? false,
    execute: options.sync === false ? async (_input, ctx) => ctx.call.id : (_input, ctx) => ctx.call.id,
    commit: (state: Ledger, id: string) => partial(state, id) as Partial<Ledger>,
  });
}

class Receipt {
  committed = ['x'];
}

describe('commit returns a plain object', () => {
  it.each([
    ['an array', () => ['x']],
    ['a Map', () => new Map([['committed', ['x']]])],
    ['a Date', () => new Date(0)],
    ['a class instance', () => new Receipt()],
    ['null', () => null],
    ['a string', () => 'committed'],
    [
      'a thenable object literal',
      () => ({
        committed: ['x'],
        then: (resolve: (value: unknown) => void) => resolve({ committed: ['y'] }),
      }),
    ],
    [
      'a revoked Proxy',
      () => {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        return proxy;
      },
    ],
  ])(
    'fails with commit_error and leaves the store as it was when commit returns %s',
    async (_what, partial) => {
      const store = ledger();
      const before = store.getState();
      const gate = createToolGate({ tools: [writer('w', { partial })], store });
      const call = gate.propose({ id: 'a', name: 'w', arguments: '{}' });
      expect(call.status).toBe('failed');
      expect(call.reason?.code).toBe('commit_error');
      expect(call.reason?.message).toMatch(/plain object|not a thenable/);
      expect(store.getState()).toBe(before);
      expect(Object.keys(store.getState())).toEqual(['committed']);
    },
  );

  it('commits an object without a prototype', () => {
    const store = ledger();
    const partial = () => Object.assign(Object.create(null) as object, { committed: ['x'] });
    const gate = createToolGate({ tools: [writer('w', { partial })], store });
    expect(gate.propose({ name: 'w', arguments: '{}' }).status).toBe('committed');
    expect(store.getState().committed).toEqual(['x']);
  });
});

describe('committed means in the store', () => {
  it('fails with commit_error when setState throws before writing, and the store is unchanged', () => {
    const inner = ledger();
    const store: StoreApi<Ledger> = {
      ...inner,
      setState: () => {
        throw new Error('quota exceeded');
      },
    };
    const before = inner.getState();
    const gate = createToolGate({ tools: [writer('w')], store });
    const call = gate.propose({ id: 'a', name: 'w', arguments: '{}' });
    expect(call.reason).toEqual({
      code: 'commit_error',
      message: 'the store refused the write: quota exceeded',
    });
    expect(inner.getState()).toBe(before);
  });

  it('fails with commit_error when the partial has a getter that throws, and the store is unchanged', () => {
    const store = ledger();
    const before = store.getState();
    const partial = () => ({
      get committed(): string[] {
        throw new Error('getter broke');
      },
    });
    const gate = createToolGate({ tools: [writer('w', { partial })], store });
    const call = gate.propose({ id: 'a', name: 'w', arguments: '{}' });
    expect(call.reason).toEqual({
      code: 'commit_error',
      message: 'the store refused the write: getter broke',
    });
    expect(store.getState()).toBe(before);
  });

  it('refuses a cancel of a call during its write, even after a nested commit of another call', async () => {
    const store = ledger();
    const gate = createToolGate({
      tools: [writer('outer', { sync: false }), writer('inner', { approval: true })],
      store,
    });
    gate.propose({ id: 'b', name: 'inner', arguments: '{}' });
    let refused: boolean | undefined;
    const stop = store.subscribe((state) => {
      if (!state.committed.includes('a')) return;
      stop();
      // A subscriber approves another call, whose sync tool commits inside this write...
      gate.approve('b');
      // ...and then cancels the call being written.
      refused = gate.cancel('a');
    });
    gate.propose({ id: 'a', name: 'outer', arguments: '{}' });
    const call = await gate.settled('a');
    expect(refused).toBe(false);
    expect(call.status).toBe('committed');
    expect(gate.get('b')?.status).toBe('committed');
    expect(store.getState().committed).toEqual(['a', 'b']);
  });

  it('holds for any interleaving of store subscribers that approve, cancel and propose, and stores that refuse', async () => {
    type Act =
      | { kind: 'approve' | 'cancel'; target: number }
      | { kind: 'propose'; tool: number }
      | { kind: 'nothing' };
    const actArb: fc.Arbitrary<Act> = fc.oneof(
      fc.record({ kind: fc.constantFrom('approve' as const, 'cancel' as const), target: fc.nat(5) }),
      fc.record({ kind: fc.constant('propose' as const), tool: fc.nat(3) }),
      fc.constant({ kind: 'nothing' as const }),
    );
    const toolArb = fc.record({ sync: fc.boolean(), approval: fc.boolean(), getterThrows: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(
        fc.array(toolArb, { minLength: 4, maxLength: 4 }),
        fc.array(actArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(3), { minLength: 1, maxLength: 5 }),
        async (toolPlans, acts, refusals, proposals) => {
          const inner = ledger();
          let writes = 0;
          const store: StoreApi<Ledger> = {
            ...inner,
            setState: (partial) => {
              // Some writes are refused before anything changes, as a store over full storage would.
              if (refusals[writes++ % refusals.length] === true) throw new Error('refused');
              inner.setState(partial);
            },
          };
          const tools = toolPlans.map((plan, i) =>
            writer(`t${i}`, {
              sync: plan.sync,
              approval: plan.approval,
              partial: plan.getterThrows
                ? (state, id) => ({
                    get committed(): string[] {
                      if (id.endsWith('3')) throw new Error('getter');
                      return [...state.committed, id];
                    },
                  })
                : undefined,
            }),
          );
          const gate: ToolGate = createToolGate({ tools, store, onError: () => undefined });
          const cancelledTrue = new Set<string>();
          let proposed = 0;
          let turn = 0;
          inner.subscribe(() => {
            const act = acts[turn++ % acts.length];
            if (act === undefined || turn > 40) return;
            const ids = [...gate.calls.getState().records.keys()];
            if (act.kind === 'approve') gate.approve(ids[act.target % Math.max(ids.length, 1)] ?? '');
            if (act.kind === 'cancel') {
              const id = ids[act.target % Math.max(ids.length, 1)] ?? '';
              if (gate.cancel(id)) cancelledTrue.add(id);
            }
            if (act.kind === 'propose' && proposed < 6)
              gate.propose({ id: `s${proposed++}`, name: `t${act.tool}`, arguments: '{}' });
          });
          proposals.forEach((tool, i) => gate.propose({ id: `p${i}`, name: `t${tool}`, arguments: '{}' }));
          for (const id of gate.calls.getState().records.keys()) gate.approve(id);
          // Settle what is still running; calls left awaiting a person are cancelled to end the run.
          await Promise.resolve();
          await Promise.resolve();
          for (const [id, call] of gate.calls.getState().records)
            if (call.status === 'awaiting_approval' && gate.cancel(id)) cancelledTrue.add(id);
          const calls = await Promise.all(
            [...gate.calls.getState().records.keys()].map((id) => gate.settled(id)),
          );
          const inStore = inner.getState().committed;
          for (const call of calls) {
            expect(call.status === 'committed').toBe(inStore.includes(call.id));
            if (cancelledTrue.has(call.id)) expect(call.status).toBe('cancelled');
          }
          expect(new Set(inStore).size).toBe(inStore.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});
