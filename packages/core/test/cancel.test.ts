/**
 * Cancel means stopped: once `cancel` returns true, the tool never starts or its signal is aborted,
 * nothing it returns reaches the store, and the audit trail lists moves in the order they happened,
 * wherever the cancel came from (a listener, the tool itself, its commit).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import {
  createToolGate,
  defineTool,
  type AuditEvent,
  type ToolCallStatus,
  type ToolGate,
} from '../src/index.ts';
import { createPipeline, type CallKeeper, type ExecutionScope } from '../src/call/pipeline.ts';
import { createPending, transition } from '../src/call/machine.ts';
import { DEFAULT_LIMITS } from '../src/proposal/limits.ts';
import type { ToolCallRecord } from '../src/record/record.ts';
import { compileSchema } from '../src/schema/schema.ts';
import { ajvJsonSchema } from '../src/schema/ajv.ts';
import { createFakeClock } from '@toolgate/test-utils';

function trail(gate: ToolGate, id: string): string[] {
  return gate.audit
    .export()
    .filter((event) => event.callId === id)
    .map((event) => `${event.from}→${event.to}`);
}

/** Each event's `from` is the `to` of the call's event before it. */
function inOrder(events: readonly AuditEvent[]): boolean {
  const last = new Map<string, ToolCallStatus>();
  for (const event of events) {
    if ((last.get(event.callId) ?? null) !== event.from) return false;
    last.set(event.callId, event.to);
  }
  return true;
}

describe('a cancel made as the call starts executing', () => {
  it.each([
    [
      'an audit listener',
      (gate: ToolGate) =>
        gate.audit.subscribe((event) => event.to === 'executing' && gate.cancel(event.callId)),
    ],
    [
      'a gate.calls subscriber',
      (gate: ToolGate) =>
        gate.calls.subscribe(() => gate.get('a')?.status === 'executing' && gate.cancel('a')),
    ],
    [
      'a subscribeCall listener',
      (gate: ToolGate) =>
        gate.subscribeCall('a', () => gate.get('a')?.status === 'executing' && gate.cancel('a')),
    ],
  ])('from %s: the tool never starts, and the audit trail is in order', async (_where, listen) => {
    let started = 0;
    const tool = defineTool({
      name: 't',
      inputSchema: { type: 'object' },
      // An async authorize moves the call to executing outside any gate operation, where listeners are told at once.
      authorize: async () => true,
      execute: () => {
        started++;
        return 'ran';
      },
    });
    const gate = createToolGate({ tools: [tool] });
    listen(gate);
    gate.propose({ id: 'a', name: 't', arguments: '{}' });
    const call = await gate.settled('a');
    expect(call.reason?.code).toBe('user_cancelled');
    expect(started).toBe(0);
    expect(trail(gate, 'a')).toEqual([
      'null→pending',
      'pending→validated',
      'validated→executing',
      'executing→cancelled',
    ]);
  });

  it('from inside execute: the signal is aborted and the result is dropped', async () => {
    let signal: AbortSignal | undefined;
    const store = createStore(() => ({ runs: 0 }));
    const tool = defineTool({
      name: 't',
      inputSchema: { type: 'object' },
      execute: (_input, ctx) => {
        signal = ctx.signal;
        expect(gate.cancel('a')).toBe(true);
        return 'ran';
      },
      commit: (state: { runs: number }) => ({ runs: state.runs + 1 }),
    });
    const gate = createToolGate({ tools: [tool], store });
    expect(gate.propose({ id: 'a', name: 't', arguments: '{}' }).status).toBe('cancelled');
    expect(signal?.aborted).toBe(true);
    expect(store.getState().runs).toBe(0);
    expect(trail(gate, 'a')).toEqual([
      'null→pending',
      'pending→validated',
      'validated→executing',
      'executing→cancelled',
    ]);
  });

  it('from inside commit, before the store is written: the signal is aborted and nothing is written', async () => {
    let signal: AbortSignal | undefined;
    const store = createStore(() => ({ runs: 0 }));
    const tool = defineTool({
      name: 't',
      inputSchema: { type: 'object' },
      execute: async (_input, ctx) => {
        signal = ctx.signal;
        return 'ran';
      },
      commit: (state: { runs: number }) => {
        expect(gate.cancel('a')).toBe(true);
        return { runs: state.runs + 1 };
      },
    });
    const gate = createToolGate({ tools: [tool], store });
    gate.propose({ id: 'a', name: 't', arguments: '{}' });
    expect((await gate.settled('a')).reason?.code).toBe('user_cancelled');
    expect(signal?.aborted).toBe(true);
    expect(store.getState().runs).toBe(0);
  });
});

describe('a keeper that opens a run asynchronously', () => {
  it('does not start the tool when the run is stopped while the keeper opens it, and gives back what it took', async () => {
    let started = 0;
    let abandoned = 0;
    const tool = defineTool({
      name: 't',
      inputSchema: { type: 'object' },
      execute: () => {
        started++;
        return 'ran';
      },
    });
    const entry = {
      tool,
      validateInput: compileSchema(tool.inputSchema, ajvJsonSchema),
      validateOutput: undefined,
    };
    const records = new Map<string, ToolCallRecord>();
    let opened!: (scope: ExecutionScope) => void;
    const keeper: CallKeeper = {
      move: async (id, event) => {
        const current = records.get(id);
        const next = current && transition(current, event, 0);
        if (next) records.set(id, next);
        return next;
      },
      open: () =>
        new Promise<ExecutionScope>((resolve) => {
          opened = resolve;
        }),
    };
    const pipeline = createPipeline({
      limits: DEFAULT_LIMITS,
      clock: createFakeClock(),
      onError: (error) => {
        throw error;
      },
      entry: () => entry,
      toolNames: () => ['t'],
      keeper,
      state: () => undefined,
    });
    const note = { actor: 'test' };
    records.set(
      'a',
      createPending({ id: 'a', name: 't', source: 'json', generatedId: false, turn: undefined, at: 0 }),
    );
    pipeline.resolve('a', 't', '{}', false, [], note);
    await waitUntil(() => records.get('a')?.status === 'executing');
    expect(pipeline.running('a')).toBe(true);
    await pipeline.stop('a', new DOMException('stop', 'AbortError'));
    await keeper.move('a', { type: 'cancel', reason: { code: 'user_cancelled', message: 'stop' } }, note);
    opened({ commit: () => undefined, abandon: () => void abandoned++ });
    await Promise.resolve();
    await Promise.resolve();
    expect(started).toBe(0);
    expect(abandoned).toBe(1);
    expect(pipeline.running('a')).toBe(false);
    expect(records.get('a')?.status).toBe('cancelled');
  });
});

/** Waits, a microtask at a time, until `ready` holds (an async keeper moves on microtasks). */
async function waitUntil(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ready(); i++) await Promise.resolve();
  expect(ready()).toBe(true);
}

type Where = 'audit' | 'calls' | 'call' | 'execute' | 'after-await' | 'commit' | 'outside';

describe('wherever a cancel comes from', () => {
  it('a call that cancel answered true for never commits, its tool never starts or is aborted, and the trail is in order', async () => {
    const where = fc.constantFrom<Where>(
      'audit',
      'calls',
      'call',
      'execute',
      'after-await',
      'commit',
      'outside',
    );
    const at = fc.constantFrom<ToolCallStatus>('pending', 'validated', 'awaiting_approval', 'executing');
    const plan = fc.record({
      where,
      at,
      sync: fc.boolean(),
      approval: fc.boolean(),
      asyncAuthorize: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(plan, { minLength: 1, maxLength: 4 }), async (plans) => {
        const store = createStore(() => ({ committed: [] as string[] }));
        const signals = new Map<string, AbortSignal>();
        const cancelled = new Set<string>();
        const cancel = (id: string) => {
          if (gate.cancel(id)) cancelled.add(id);
        };
        const planOf = (id: string) => plans[Number(id.slice(1))];
        const tools = plans.map((p, i) =>
          defineTool({
            name: `t${i}`,
            inputSchema: { type: 'object' },
            needsApproval: p.approval,
            ...(p.asyncAuthorize ? { authorize: async () => true } : {}),
            execute: p.sync
              ? (_input: unknown, ctx: { signal: AbortSignal; call: { id: string } }) => {
                  signals.set(ctx.call.id, ctx.signal);
                  if (p.where === 'execute') cancel(ctx.call.id);
                  return ctx.call.id;
                }
              : async (_input: unknown, ctx: { signal: AbortSignal; call: { id: string } }) => {
                  signals.set(ctx.call.id, ctx.signal);
                  if (p.where === 'execute') cancel(ctx.call.id);
                  await Promise.resolve();
                  if (p.where === 'after-await') cancel(ctx.call.id);
                  return ctx.call.id;
                },
            commit: (state: { committed: string[] }, output: string) => {
              if (p.where === 'commit') cancel(output);
              return { committed: [...state.committed, output] };
            },
          }),
        );
        const gate = createToolGate({ tools, store });
        gate.audit.subscribe((event) => {
          if (planOf(event.callId)?.where === 'audit' && event.to === planOf(event.callId)?.at)
            cancel(event.callId);
        });
        gate.calls.subscribe((state) => {
          for (const id of state.changed)
            if (planOf(id)?.where === 'calls' && gate.get(id)?.status === planOf(id)?.at) cancel(id);
        });
        plans.forEach((p, i) => {
          if (p.where === 'call')
            gate.subscribeCall(`c${i}`, () => gate.get(`c${i}`)?.status === p.at && cancel(`c${i}`));
        });
        const ids = plans.map((_, i) => gate.propose({ id: `c${i}`, name: `t${i}`, arguments: '{}' }).id);
        plans.forEach((p, i) => p.where === 'outside' && cancel(`c${i}`));
        await Promise.resolve();
        for (const id of ids) gate.approve(id);
        const settled = await Promise.all(ids.map((id) => gate.settled(id)));
        for (const call of settled) {
          const inStore = store.getState().committed.includes(call.id);
          expect(call.status === 'committed').toBe(inStore);
          if (cancelled.has(call.id)) {
            expect(call.status).toBe('cancelled');
            const signal = signals.get(call.id);
            if (signal !== undefined) expect(signal.aborted).toBe(true);
          }
        }
        expect(inOrder(gate.audit.export())).toBe(true);
        for (const call of settled)
          expect(
            gate.audit
              .export()
              .filter((e) => e.callId === call.id)
              .at(-1)?.to,
          ).toBe(call.status);
      }),
      { numRuns: 300 },
    );
  });
});
