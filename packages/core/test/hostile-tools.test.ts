/**
 * A tool is app code the gate does not control: whatever it returns or throws, `propose` answers
 * with a record, the call settles, and nothing reaches the store unless the result was verified.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createToolGate, defineTool, isTerminal } from '../src/index.ts';
import { createShop, type Shop } from '@toolgate/test-utils';

function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** An object that reads as a plain value until the gate looks for a cancellation on it. */
function throwsOnSymbols(): object {
  return new Proxy(
    {},
    {
      get(_target, key) {
        if (typeof key === 'symbol') throw new Error('no symbols here');
        return undefined;
      },
    },
  );
}

const hostileResults: [string, () => unknown, RegExp][] = [
  ['a revoked Proxy', revoked, /revoked/],
  [
    'a thenable whose then throws',
    () => ({
      then: () => {
        throw new Error('then broke');
      },
    }),
    /then broke/,
  ],
  [
    'a thenable whose then getter throws',
    () => ({
      get then() {
        throw new Error('no then');
      },
    }),
    /no then/,
  ],
  ['an object that throws when asked if it is a cancellation', throwsOnSymbols, /no symbols here/],
  [
    'a promise of an object that throws when asked if it is a cancellation',
    () => Promise.resolve(throwsOnSymbols()),
    /no symbols here/,
  ],
  [
    'a thenable that calls back twice and then throws',
    () => ({
      then: (resolve: (v: unknown) => void) => {
        resolve(1);
        resolve(2);
        throw new Error('late');
      },
    }),
    /^/,
  ],
];

describe('a tool that answers something hostile', () => {
  it.each(hostileResults)(
    'ends as failed/tool_error, without throwing from propose, when execute returns %s',
    async (_what, result, message) => {
      const store = createShop();
      const before = store.getState();
      const tool = defineTool({
        name: 'x',
        inputSchema: { type: 'object' },
        execute: () => result() as never,
        commit: (): Partial<Shop> => ({ balance_cents: 0 }),
      });
      const gate = createToolGate({ tools: [tool], store });
      let call: ReturnType<typeof gate.propose> | undefined;
      expect(() => (call = gate.propose({ id: 'a', name: 'x', arguments: '{}' }))).not.toThrow();
      expect(call?.id).toBe('a');
      const settled = await gate.settled('a');
      if (settled.status === 'committed') {
        // Only the thenable that calls back with a plain value first may commit: its first answer counts.
        expect(settled.output).toBe(1);
        return;
      }
      expect(settled.reason).toMatchObject({ code: 'tool_error' });
      expect(settled.reason?.message).toMatch(message);
      expect(store.getState()).toBe(before);
    },
  );

  it('ends as failed/tool_error when the tool cancels with a reason that cannot be read', async () => {
    const cancelled = {
      [Symbol.for('toolgate.cancel')]: true,
      get reason(): string {
        throw new Error('unreadable');
      },
    };
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      execute: () => cancelled as never,
    });
    const gate = createToolGate({ tools: [tool] });
    expect(() => gate.propose({ id: 'a', name: 'x', arguments: '{}' })).not.toThrow();
    expect((await gate.settled('a')).reason).toMatchObject({
      code: 'tool_error',
      message: expect.stringMatching(/unreadable/),
    });
  });

  it('ends as failed/commit_error when commit returns an object whose then getter throws', async () => {
    const store = createShop();
    const before = store.getState();
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      execute: () => 1,
      commit: () =>
        ({
          get then(): never {
            throw new Error('no then');
          },
        }) as unknown as Partial<Shop>,
    });
    const gate = createToolGate({ tools: [tool], store });
    expect(() => gate.propose({ id: 'a', name: 'x', arguments: '{}' })).not.toThrow();
    expect((await gate.settled('a')).reason?.code).toBe('commit_error');
    expect(store.getState()).toBe(before);
  });

  it('settles when the tool writes to its context', async () => {
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      execute: (_input, ctx) => {
        try {
          Object.assign(ctx, { ended: true, stage: 'ended', timer: 1 });
        } catch {
          // A frozen context refuses the write; the tool goes on.
        }
        return Promise.resolve('done');
      },
    });
    const gate = createToolGate({ tools: [tool] });
    gate.propose({ id: 'a', name: 'x', arguments: '{}' });
    expect(await gate.settled('a')).toMatchObject({ status: 'committed', output: 'done' });
  });

  it('never throws from propose and always settles, whatever a tool returns', async () => {
    const hostile = fc.oneof(
      fc.constantFrom(...hostileResults.map(([, make]) => make)),
      fc.anything().map((value) => () => value),
      fc.anything().map((value) => () => Promise.resolve(value)),
      // Anything may be thrown or rejected with, not only an Error.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      fc.anything().map((value) => () => Promise.reject(value)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(hostile, fc.boolean()), { minLength: 1, maxLength: 6 }),
        async (results) => {
          const onError = vi.fn();
          const store = createShop();
          const tools = results.map(([make, sync], i) =>
            defineTool({
              name: `t${i}`,
              inputSchema: { type: 'object' },
              execute: sync ? () => make() as never : async () => make() as never,
              commit: (state: Shop) => ({ balance_cents: state.balance_cents - 1 }),
            }),
          );
          const gate = createToolGate({ tools, store, onError });
          const ids = results.map((_, i) => gate.propose({ name: `t${i}`, arguments: '{}' }).id);
          const settled = await Promise.all(ids.map((id) => gate.settled(id)));
          for (const call of settled) expect(isTerminal(call.status)).toBe(true);
          const committed = settled.filter((call) => call.status === 'committed').length;
          expect(store.getState().balance_cents).toBe(10_000 - committed);
        },
      ),
      { numRuns: 200 },
    );
  });
});
