import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { cancel, createToolGate, defineTool, isTerminal, type ToolContext } from '../src/index.ts';
import {
  args,
  chargeTool,
  createFakeClock,
  deferred,
  createShop,
  type Shop,
  watchStore,
} from '@toolgate/test-utils';

const charge = args({ amount_cents: 500, currency: 'USD' });

describe('execution', () => {
  it('runs a sync tool to committed within propose', () => {
    const store = createShop();
    const tool = defineTool({
      name: 'charge',
      inputSchema: { type: 'object', properties: { amount_cents: { type: 'integer' } } },
      execute: (input) => ({ amount_cents: input.amount_cents ?? 0 }),
      commit: (state: Shop, output) => ({ balance_cents: state.balance_cents - output.amount_cents }),
    });
    const gate = createToolGate({ tools: [tool], store });
    const call = gate.propose({ name: 'charge', arguments: '{"amount_cents":5}' });
    expect(call.status).toBe('committed');
    expect(call.history.map((h) => h.status)).toEqual(['pending', 'validated', 'executing', 'committed']);
    expect(store.getState().balance_cents).toBe(9_995);
  });

  it('shows an async tool as executing until it resolves', async () => {
    const result = deferred<{ amount_cents: number; currency: string }>();
    const store = createShop();
    const gate = createToolGate({ tools: [chargeTool(() => result.promise)], store });
    const call = gate.propose({ id: 'c1', name: 'charge', arguments: charge });
    expect(call.status).toBe('executing');
    expect(store.getState().balance_cents).toBe(10_000);
    result.resolve({ amount_cents: 500, currency: 'USD' });
    expect((await gate.settled('c1')).status).toBe('committed');
    expect(store.getState().balance_cents).toBe(9_500);
  });

  it('gives each execution an AbortSignal and the call id and name', async () => {
    let seen: ToolContext | undefined;
    const tool = defineTool({
      name: 'probe',
      inputSchema: { type: 'object' },
      execute: (_input, ctx) => {
        seen = ctx;
        return ctx.signal.aborted;
      },
    });
    const call = await createToolGate({ tools: [tool] }).run({ id: 'p1', name: 'probe', arguments: '{}' });
    expect(call).toMatchObject({ status: 'committed', output: false });
    expect(seen?.call).toEqual({ id: 'p1', name: 'probe' });
    expect(seen?.signal).toBeInstanceOf(AbortSignal);
  });

  it('cancels an executing call at once, aborts its signal, and drops the late result', async () => {
    const result = deferred<unknown>();
    let signal: AbortSignal | undefined;
    const store = createShop();
    const before = store.getState();
    const updates = watchStore(store);
    const tool = defineTool({
      name: 'slow',
      inputSchema: { type: 'object' },
      execute: (_input, ctx) => {
        signal = ctx.signal;
        return result.promise;
      },
      commit: () => ({ balance_cents: 0 }),
    });
    const gate = createToolGate({ tools: [tool], store });
    gate.propose({ id: 's1', name: 'slow', arguments: '{}' });
    expect(gate.cancel('s1', 'changed my mind')).toBe(true);
    expect(gate.get('s1')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'user_cancelled', message: 'changed my mind' },
    });
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as DOMException).name).toBe('AbortError');
    result.resolve({ late: true });
    await result.promise;
    await Promise.resolve();
    expect(gate.get('s1')?.status).toBe('cancelled');
    expect(store.getState()).toBe(before);
    expect(updates).toHaveLength(0);
  });

  it('swallows the rejection of a cancelled tool without an unhandled rejection', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    const tool = defineTool({
      name: 'slow',
      inputSchema: { type: 'object' },
      execute: (_input, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason as Error)),
        ),
    });
    const gate = createToolGate({ tools: [tool] });
    gate.propose({ id: 's', name: 'slow', arguments: '{}' });
    gate.cancel('s');
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', unhandled);
    expect(unhandled).not.toHaveBeenCalled();
    expect(gate.get('s')?.status).toBe('cancelled');
  });

  it('ends a call that passes timeoutMs with cancelled/timeout, on an injected clock', async () => {
    const clock = createFakeClock();
    let signal: AbortSignal | undefined;
    const tool = defineTool({
      name: 'slow',
      inputSchema: { type: 'object' },
      timeoutMs: 5_000,
      execute: (_input, ctx) => {
        signal = ctx.signal;
        return new Promise(() => {});
      },
    });
    const gate = createToolGate({ tools: [tool], clock });
    gate.propose({ id: 't1', name: 'slow', arguments: '{}' });
    clock.advance(4_999);
    expect(gate.get('t1')?.status).toBe('executing');
    clock.advance(1);
    const call = await gate.settled('t1');
    expect(call.reason).toEqual({ code: 'timeout', message: 'the tool did not finish within 5000 ms' });
    expect((signal?.reason as DOMException).name).toBe('TimeoutError');
    expect(call.history.at(-1)?.at).toBe(clock.now());
  });

  it('clears the timeout of a call that finished in time', async () => {
    const clock = createFakeClock();
    const tool = defineTool({
      name: 'quick',
      inputSchema: { type: 'object' },
      timeoutMs: 1_000,
      execute: async () => 'ok',
    });
    const gate = createToolGate({ tools: [tool], clock });
    await gate.run({ name: 'quick', arguments: '{}' });
    expect(clock.pending).toBe(0);
  });

  it('does not start the timeout while a call waits for a person', () => {
    const clock = createFakeClock();
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      timeoutMs: 10,
      needsApproval: true,
      execute: () => 'ok',
    });
    const gate = createToolGate({ tools: [tool], clock });
    gate.propose({ id: 'a', name: 'x', arguments: '{}' });
    clock.advance(1_000);
    expect(gate.get('a')?.status).toBe('awaiting_approval');
  });
});

describe('output and commit', () => {
  it('fails with output_invalid when the output does not match outputSchema, store untouched', async () => {
    const store = createShop();
    const before = store.getState();
    const tool = defineTool({
      name: 'quote',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] },
      execute: () => ({ cents: '12' }),
      commit: () => ({ balance_cents: 0 }),
    });
    const call = await createToolGate({ tools: [tool], store }).run({ name: 'quote', arguments: '{}' });
    expect(call.reason?.code).toBe('output_invalid');
    expect(call.reason?.issues).toEqual([
      { path: '/cents', keyword: 'type', message: 'must be integer (got string "12")' },
    ]);
    expect(store.getState()).toBe(before);
  });

  it('commits the value a Standard Schema output parses to', async () => {
    const tool = defineTool({
      name: 'quote',
      inputSchema: z.object({}),
      outputSchema: z.object({ cents: z.coerce.number() }),
      execute: () => ({ cents: '12' }),
    });
    const call = await createToolGate({ tools: [tool] }).run({ name: 'quote', arguments: '{}' });
    expect(call).toMatchObject({ status: 'committed', output: { cents: 12 } });
  });

  it('commits with exactly one setState holding what commit returned', async () => {
    const store = createShop();
    const spy = vi.spyOn(store, 'setState');
    const call = await createToolGate({ tools: [chargeTool()], store }).run({
      name: 'charge',
      arguments: charge,
    });
    expect(call.status).toBe('committed');
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy).toHaveBeenCalledWith({
      balance_cents: 9_500,
      charges: [{ amount_cents: 500, currency: 'USD' }],
    });
  });

  it('fails with commit_error when commit throws, store untouched', async () => {
    const store = createShop();
    const before = store.getState();
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      execute: () => 1,
      commit: (): Partial<Shop> => {
        throw new Error('invariant broken');
      },
    });
    const call = await createToolGate({ tools: [tool], store }).run({ name: 'x', arguments: '{}' });
    expect(call.reason).toEqual({ code: 'commit_error', message: 'commit threw: invariant broken' });
    expect(store.getState()).toBe(before);
  });

  it('fails with commit_error when commit returns a Promise, store untouched', async () => {
    const store = createShop();
    const before = store.getState();
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      execute: () => 1,
      commit: () => Promise.resolve({ balance_cents: 0 }) as unknown as Partial<Shop>,
    });
    const call = await createToolGate({ tools: [tool], store }).run({ name: 'x', arguments: '{}' });
    expect(call.reason?.code).toBe('commit_error');
    expect(store.getState()).toBe(before);
  });

  it('commits a tool without commit without touching the store', async () => {
    const store = createShop();
    const spy = vi.spyOn(store, 'setState');
    const tool = defineTool({
      name: 'look',
      inputSchema: { type: 'object' },
      execute: () => ({ seen: true }),
    });
    const call = await createToolGate({ tools: [tool], store }).run({ name: 'look', arguments: '{}' });
    expect(call).toMatchObject({ status: 'committed', output: { seen: true } });
    expect(spy).not.toHaveBeenCalled();
  });

  it('refuses a cancel made by a store subscriber while the commit is being written', async () => {
    const store = createShop();
    const gate = createToolGate({ tools: [chargeTool()], store });
    let refused: boolean | undefined;
    store.subscribe(() => {
      refused = gate.cancel('c1', 'the cart changed');
    });
    const call = await gate.run({ id: 'c1', name: 'charge', arguments: charge });
    expect(refused).toBe(false);
    expect(call.status).toBe('committed');
    expect(store.getState().balance_cents).toBe(9_500);
  });

  it('does not write the store when commit itself cancels the call', async () => {
    const store = createShop();
    const before = store.getState();
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      execute: async () => 1,
      commit: (state: Shop) => {
        gate.cancel('c1', 'changed my mind');
        return { balance_cents: state.balance_cents - 1 };
      },
    });
    // `commit` runs long after this line, so it may use the gate declared below.
    const gate = createToolGate({ tools: [tool], store });
    const call = await gate.run({ id: 'c1', name: 'x', arguments: '{}' });
    expect(call.reason?.code).toBe('user_cancelled');
    expect(store.getState()).toBe(before);
  });

  it('stays committed when an app subscriber throws after the state changed, and reports it', async () => {
    const store = createShop();
    const onError = vi.fn();
    store.subscribe(() => {
      throw new Error('listener bug');
    });
    const call = await createToolGate({ tools: [chargeTool()], store, onError }).run({
      name: 'charge',
      arguments: charge,
    });
    expect(call.status).toBe('committed');
    expect(store.getState().balance_cents).toBe(9_500);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'listener bug' }));
  });
});

describe('approval and policy', () => {
  const transfer = (
    needsApproval: boolean | ((input: { cents: number }) => boolean),
    execute: () => unknown = vi.fn(() => ({ ok: true })),
  ) =>
    defineTool({
      name: 'transfer',
      inputSchema: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] },
      needsApproval,
      execute,
      commit: (state: Shop, _output, input) => ({ balance_cents: state.balance_cents - input.cents }),
    });

  it('parks a call in awaiting_approval, then approve runs and commits it', async () => {
    const store = createShop();
    const execute = vi.fn(() => ({ ok: true }));
    const gate = createToolGate({ tools: [transfer(true, execute)], store });
    const call = gate.propose({ id: 'tr', name: 'transfer', arguments: '{"cents":700}' });
    expect(call.status).toBe('awaiting_approval');
    expect(execute).not.toHaveBeenCalled();
    expect(gate.approve('tr')).toBe(true);
    expect((await gate.settled('tr')).status).toBe('committed');
    expect(execute).toHaveBeenCalledTimes(1);
    expect(store.getState().balance_cents).toBe(9_300);
  });

  it('deny cancels with approval_denied and the reason given; nothing runs', async () => {
    const store = createShop();
    const before = store.getState();
    const execute = vi.fn(() => ({ ok: true }));
    const gate = createToolGate({ tools: [transfer(true, execute)], store });
    gate.propose({ id: 'tr', name: 'transfer', arguments: '{"cents":700}' });
    expect(gate.deny('tr', 'too much')).toBe(true);
    expect(gate.get('tr')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'approval_denied', message: 'too much' },
    });
    expect(execute).not.toHaveBeenCalled();
    expect(store.getState()).toBe(before);
  });

  it('asks only when needsApproval(input) says so', () => {
    const gate = createToolGate({ tools: [transfer((input) => input.cents > 1_000)], store: createShop() });
    expect(gate.propose({ name: 'transfer', arguments: '{"cents":5}' }).status).toBe('committed');
    expect(gate.propose({ name: 'transfer', arguments: '{"cents":5000}' }).status).toBe('awaiting_approval');
  });

  it('never asks a person about an invalid proposal', () => {
    const gate = createToolGate({ tools: [transfer(true)], store: createShop() });
    expect(gate.propose({ name: 'transfer', arguments: '{"cents":"5"}' }).status).toBe('rejected');
    expect([...gate.calls.getState().records.values()].some((c) => c.status === 'awaiting_approval')).toBe(
      false,
    );
  });

  it('approve, deny and cancel after a terminal status are no-ops that return false', async () => {
    const gate = createToolGate({ tools: [transfer(true)], store: createShop() });
    gate.propose({ id: 'tr', name: 'transfer', arguments: '{"cents":1}' });
    gate.approve('tr');
    const done = await gate.settled('tr');
    expect(gate.approve('tr')).toBe(false);
    expect(gate.deny('tr')).toBe(false);
    expect(gate.cancel('tr')).toBe(false);
    expect(gate.get('tr')).toBe(done);
  });

  it('approve and deny of an unknown id return false and never throw', () => {
    const gate = createToolGate({ tools: [] });
    expect(gate.approve('nope')).toBe(false);
    expect(gate.deny('nope')).toBe(false);
    expect(gate.cancel('nope')).toBe(false);
  });

  it('approve twice runs the tool once', async () => {
    const execute = vi.fn(async () => ({ ok: true }));
    const gate = createToolGate({ tools: [transfer(true, execute)], store: createShop() });
    gate.propose({ id: 'tr', name: 'transfer', arguments: '{"cents":1}' });
    expect(gate.approve('tr')).toBe(true);
    expect(gate.approve('tr')).toBe(false);
    await gate.settled('tr');
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('cancel while awaiting approval is user_cancelled', () => {
    const gate = createToolGate({ tools: [transfer(true)], store: createShop() });
    gate.propose({ id: 'tr', name: 'transfer', arguments: '{"cents":1}' });
    expect(gate.cancel('tr')).toBe(true);
    expect(gate.get('tr')?.reason?.code).toBe('user_cancelled');
  });

  it('authorize refusing rejects with unauthorized and the reason given; the tool never runs', async () => {
    const store = createShop(100);
    const execute = vi.fn(() => ({ ok: true }));
    const tool = defineTool({
      name: 'spend',
      inputSchema: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] },
      authorize: (input, { state }: { state: Shop }) =>
        input.cents <= state.balance_cents ? true : 'not enough balance',
      execute,
    });
    const gate = createToolGate({ tools: [tool], store });
    const refused = await gate.run({ name: 'spend', arguments: '{"cents":500}' });
    expect(refused.reason).toEqual({ code: 'unauthorized', message: 'not enough balance' });
    expect(refused.input).toEqual({ cents: 500 });
    expect(execute).not.toHaveBeenCalled();
    expect((await gate.run({ name: 'spend', arguments: '{"cents":50}' })).status).toBe('committed');
  });

  it.each([
    ['false', () => false, 'the app did not authorize this call'],
    [
      'a rejected promise',
      () => Promise.reject(new Error('auth server down')),
      'authorize threw: auth server down',
    ],
    [
      'a throw',
      () => {
        throw new Error('bug');
      },
      'authorize threw: bug',
    ],
    ['a resolved false', async () => false, 'the app did not authorize this call'],
  ])('authorize answering %s fails closed', async (_what, authorize, message) => {
    const tool = defineTool({ name: 'x', inputSchema: { type: 'object' }, authorize, execute: () => 'ran' });
    const call = await createToolGate({ tools: [tool] }).run({ name: 'x', arguments: '{}' });
    expect(call.reason).toEqual({ code: 'unauthorized', message });
  });

  it('an async authorize that allows lets the call run', async () => {
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      authorize: async () => true,
      execute: () => 'ran',
    });
    expect((await createToolGate({ tools: [tool] }).run({ name: 'x', arguments: '{}' })).status).toBe(
      'committed',
    );
  });

  it('a call cancelled while authorize is pending stays cancelled', async () => {
    const verdict = deferred<boolean>();
    const execute = vi.fn(() => 'ran');
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      authorize: () => verdict.promise,
      execute,
    });
    const gate = createToolGate({ tools: [tool] });
    gate.propose({ id: 'a', name: 'x', arguments: '{}' });
    expect(gate.get('a')?.status).toBe('validated');
    gate.cancel('a');
    verdict.resolve(true);
    await gate.settled('a');
    await verdict.promise;
    expect(gate.get('a')?.status).toBe('cancelled');
    expect(execute).not.toHaveBeenCalled();
  });

  it('waits for an async needsApproval and asks a person when it resolves true', async () => {
    const execute = vi.fn(() => 'ran');
    const verdict = deferred<boolean>();
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      needsApproval: () => verdict.promise,
      execute,
    });
    const gate = createToolGate({ tools: [tool] });
    expect(gate.propose({ id: 'a', name: 'x', arguments: '{}' }).status).toBe('validated');
    verdict.resolve(true);
    await verdict.promise;
    expect(gate.get('a')?.status).toBe('awaiting_approval');
    expect(execute).not.toHaveBeenCalled();
  });

  it('runs a call without asking only when an async needsApproval resolves false', async () => {
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      needsApproval: async () => false,
      execute: () => 'ran',
    });
    expect(await createToolGate({ tools: [tool] }).run({ name: 'x', arguments: '{}' })).toMatchObject({
      status: 'committed',
      output: 'ran',
    });
  });

  it.each([
    [
      'a rejected promise',
      () => Promise.reject(new Error('policy service down')),
      'needsApproval threw: policy service down',
    ],
    [
      'a promise of undefined',
      async () => undefined,
      'needsApproval answered undefined; it must answer true or false',
    ],
    ['a promise of a string', async () => 'no', 'needsApproval answered "no"; it must answer true or false'],
    [
      'a thenable from another realm that resolves 0',
      () => ({ then: (resolve: (value: unknown) => void) => resolve(0) }),
      'needsApproval answered 0; it must answer true or false',
    ],
    ['undefined', () => undefined, 'needsApproval answered undefined; it must answer true or false'],
  ])(
    'rejects as unauthorized, and runs nothing, when needsApproval answers %s',
    async (_what, needsApproval, message) => {
      const execute = vi.fn(() => 'ran');
      const tool = defineTool({
        name: 'x',
        inputSchema: { type: 'object' },
        needsApproval: needsApproval as unknown as () => boolean,
        execute,
      });
      const call = await createToolGate({ tools: [tool] }).run({ name: 'x', arguments: '{}' });
      expect(call.reason).toEqual({ code: 'unauthorized', message });
      expect(execute).not.toHaveBeenCalled();
    },
  );

  it('does not run a call cancelled while an async needsApproval is pending', async () => {
    const verdict = deferred<boolean>();
    const execute = vi.fn(() => 'ran');
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      needsApproval: () => verdict.promise,
      execute,
    });
    const gate = createToolGate({ tools: [tool] });
    gate.propose({ id: 'a', name: 'x', arguments: '{}' });
    expect(gate.cancel('a')).toBe(true);
    verdict.resolve(false);
    await verdict.promise;
    expect(gate.get('a')?.status).toBe('cancelled');
    expect(execute).not.toHaveBeenCalled();
  });

  it('a needsApproval that throws fails closed', () => {
    const tool = defineTool({
      name: 'x',
      inputSchema: { type: 'object' },
      needsApproval: () => {
        throw new Error('oops');
      },
      execute: () => 'ran',
    });
    expect(createToolGate({ tools: [tool] }).propose({ name: 'x', arguments: '{}' }).reason?.code).toBe(
      'unauthorized',
    );
  });
});

describe('external signal', () => {
  it('cancels a call when the signal given to propose aborts', async () => {
    const controller = new AbortController();
    const tool = defineTool({
      name: 'slow',
      inputSchema: { type: 'object' },
      execute: () => new Promise(() => {}),
    });
    const gate = createToolGate({ tools: [tool] });
    gate.propose({ id: 'x', name: 'slow', arguments: '{}' }, { signal: controller.signal });
    controller.abort();
    expect((await gate.settled('x')).reason?.code).toBe('user_cancelled');
  });

  it('does not run a call whose signal is already aborted', () => {
    const execute = vi.fn();
    const tool = defineTool({ name: 't', inputSchema: { type: 'object' }, execute });
    const call = createToolGate({ tools: [tool] }).propose(
      { name: 't', arguments: '{}' },
      { signal: AbortSignal.abort() },
    );
    expect(call.status).toBe('cancelled');
    expect(execute).not.toHaveBeenCalled();
  });
});

describe('every way a call can end', () => {
  it('reaches exactly one terminal status and settles once', async () => {
    const gate = createToolGate({
      tools: [
        chargeTool(),
        defineTool({ name: 'stop', inputSchema: { type: 'object' }, execute: () => cancel() }),
        defineTool({
          name: 'boom',
          inputSchema: { type: 'object' },
          execute: () => Promise.reject(new Error('x')),
        }),
      ],
      store: createShop(),
    });
    const endings = await Promise.all([
      gate.run({ name: 'charge', arguments: charge }),
      gate.run({ name: 'charge', arguments: '{' }),
      gate.run({ name: 'stop', arguments: '{}' }),
      gate.run({ name: 'boom', arguments: '{}' }),
    ]);
    expect(endings.map((c) => c.status)).toEqual(['committed', 'rejected', 'cancelled', 'failed']);
    for (const call of endings) {
      expect(call.history.filter((h) => isTerminal(h.status))).toHaveLength(1);
      expect(call.history[0]?.status).toBe('pending');
    }
  });

  it('settled rejects for an id it never saw', async () => {
    await expect(createToolGate({ tools: [] }).settled('ghost')).rejects.toThrow(/no call with id "ghost"/);
  });
});
