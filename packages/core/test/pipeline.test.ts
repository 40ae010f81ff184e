/**
 * The pipeline over a keeper whose every move answers a Promise, as a server's ledger does: the
 * promises the browser gate keeps hold there too.
 */
import { describe, expect, it, vi } from 'vitest';
import { cancel, defineTool, type ToolDefinition } from '../src/index.ts';
import { DEFAULT_LIMITS } from '../src/proposal/limits.ts';
import { createPending, transition } from '../src/call/machine.ts';
import { compileEntry, createPipeline, type CallKeeper, type ExecutionScope } from '../src/call/pipeline.ts';
import type { ToolCallRecord } from '../src/record/record.ts';
import { ajvJsonSchema } from '../src/schema/ajv.ts';
import { createFakeClock } from '@toolgate/test-utils';

const note = { actor: 'user_42' };

/** A keeper that keeps records in a map but answers each move and each commit a microtask later. */
function ledger(tool: ToolDefinition, scope: Partial<ExecutionScope> = {}) {
  const records = new Map<string, ToolCallRecord>();
  const trail: string[] = [];
  const onError = vi.fn();
  const move: CallKeeper['move'] = async (id, event) => {
    await Promise.resolve();
    const current = records.get(id);
    const next = current && transition(current, event, 0);
    if (next === undefined) return undefined;
    records.set(id, next);
    trail.push(`${current?.status}→${next.status}`);
    return next;
  };
  const keeper: CallKeeper = {
    move,
    open: async () => ({
      commit: (call, output) => move(call.id, { type: 'commit', output }, note),
      ...scope,
    }),
  };
  const entry = compileEntry(tool, ajvJsonSchema);
  const pipeline = createPipeline({
    limits: DEFAULT_LIMITS,
    clock: createFakeClock(),
    onError,
    entry: () => entry,
    toolNames: () => [tool.name],
    keeper,
    state: () => undefined,
  });
  const start = (id: string, raw: unknown) => {
    records.set(
      id,
      createPending({ id, name: tool.name, source: 'json', generatedId: false, turn: undefined, at: 0 }),
    );
    pipeline.resolve(id, tool.name, raw, false, [], note);
  };
  /** Waits until the call settles (or a bound is reached), a microtask at a time. */
  const settled = async (id: string) => {
    for (let i = 0; i < 200; i++) {
      const status = records.get(id)?.status;
      if (status === 'committed' || status === 'failed' || status === 'cancelled' || status === 'rejected')
        break;
      await Promise.resolve();
    }
    return records.get(id);
  };
  return { records, trail, pipeline, start, settled, onError };
}

describe('the pipeline over an async keeper', () => {
  it('runs a call to committed; a tool that sorts a copy of its input leaves the record’s as it was', async () => {
    const tool = defineTool({
      name: 'sort',
      inputSchema: {
        type: 'object',
        properties: { items: { type: 'array', items: { type: 'integer' } } },
        required: ['items'],
      },
      execute: (input) => structuredClone(input).items.sort((a, b) => a - b),
    });
    const { start, settled, trail } = ledger(tool);
    start('a', '{"items":[3,1,2]}');
    const call = await settled('a');
    expect(call).toMatchObject({ status: 'committed', input: { items: [3, 1, 2] }, output: [1, 2, 3] });
    expect(Object.isFrozen(call?.input)).toBe(true);
    expect(Object.isFrozen(call?.output)).toBe(true);
    expect(trail).toEqual(['pending→validated', 'validated→executing', 'executing→committed']);
  });

  it('gives back what the run held, then fails the call with commit_error, when the commit rejects', async () => {
    const order: string[] = [];
    const tool = defineTool({ name: 't', inputSchema: { type: 'object' }, execute: async () => 'done' });
    const { start, settled } = ledger(tool, {
      commit: () => Promise.reject(new Error('deadlock')),
      abandon: async () => {
        order.push('abandon');
      },
    });
    start('a', '{}');
    const call = await settled('a');
    expect(call?.reason).toEqual({
      code: 'commit_error',
      message: 'the result could not be committed: deadlock',
    });
    expect(order).toEqual(['abandon']);
  });

  it('fails the call with tool_error when its result cannot be read, and with tool_cancelled when it cancels', async () => {
    const unreadable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('unreadable');
        },
      },
    );
    const { start: startBad, settled: settledBad } = ledger(
      defineTool({ name: 't', inputSchema: { type: 'object' }, execute: async () => unreadable }),
    );
    startBad('a', '{}');
    expect((await settledBad('a'))?.reason).toMatchObject({
      code: 'tool_error',
      message: expect.stringMatching(/unreadable/) as string,
    });
    const { start, settled } = ledger(
      defineTool({ name: 't', inputSchema: { type: 'object' }, execute: () => cancel('out of stock') }),
    );
    start('b', '{}');
    expect((await settled('b'))?.reason).toEqual({ code: 'tool_cancelled', message: 'out of stock' });
  });

  it('a stop aborts the running tool and settles once the run has been given back', async () => {
    let signal: AbortSignal | undefined;
    const order: string[] = [];
    const tool = defineTool({
      name: 't',
      inputSchema: { type: 'object' },
      execute: (_input, ctx) => {
        signal = ctx.signal;
        return new Promise(() => {});
      },
    });
    const { start, pipeline, records } = ledger(tool, {
      abandon: async () => {
        await Promise.resolve();
        order.push('abandon');
      },
    });
    start('a', '{}');
    for (let i = 0; i < 50 && signal === undefined; i++) await Promise.resolve();
    expect(records.get('a')?.status).toBe('executing');
    await pipeline.stop('a', new DOMException('stop', 'AbortError'));
    order.push('stopped');
    expect(signal?.aborted).toBe(true);
    expect(order).toEqual(['abandon', 'stopped']);
    expect(pipeline.running('a')).toBe(false);
  });
});
