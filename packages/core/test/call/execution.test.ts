/** The runs of tools, over a keeper driven by hand: one run per call, timeouts, stops, output checks. */
import { describe, expect, it, vi } from 'vitest';
import { defineTool, type ToolDefinition } from '../../src/index.ts';
import { createPending, transition } from '../../src/call/machine.ts';
import type {
  CallKeeper,
  ExecutingCall,
  ExecutionScope,
  PipelineHost,
} from '../../src/call/pipeline-host.ts';
import type { ToolCallRecord } from '../../src/record/record.ts';
import { createExecution } from '../../src/call/steps/execution.ts';
import { createMoves } from '../../src/call/steps/moves.ts';
import { createToolInputs } from '../../src/call/steps/tool-inputs.ts';
import { DEFAULT_LIMITS } from '../../src/proposal/limits.ts';
import { ajvJsonSchema } from '../../src/schema/ajv.ts';
import { compileEntry } from '../../src/tool/tool-entry.ts';
import { createFakeClock } from '@toolgate/test-utils';

const note = { actor: 'user_42' };

function harness(
  tool: ToolDefinition,
  open: (scope: ExecutionScope) => ExecutionScope | Promise<ExecutionScope> = (scope) => scope,
) {
  const records = new Map<string, ToolCallRecord>();
  const order: string[] = [];
  const move: CallKeeper['move'] = (id, event) => {
    const current = records.get(id);
    const next = current && transition(current, event, 0);
    if (next !== undefined) {
      records.set(id, next);
      order.push(next.status);
    }
    return next;
  };
  const keeper: CallKeeper = {
    move,
    open: () => open({ commit: (call, output) => move(call.id, { type: 'commit', output }, note) }),
  };
  const clock = createFakeClock();
  const entry = compileEntry(tool, ajvJsonSchema);
  const host: PipelineHost = {
    limits: DEFAULT_LIMITS,
    clock,
    onError: vi.fn(),
    entry: () => entry,
    toolNames: () => [tool.name],
    keeper,
    state: () => undefined,
  };
  const inputs = createToolInputs();
  const execution = createExecution(host, createMoves(keeper, host.onError), inputs);
  const executing = (id: string): ExecutingCall => {
    let call: ToolCallRecord | undefined = createPending({
      id,
      name: tool.name,
      source: 'json',
      generatedId: false,
      turn: undefined,
      at: 0,
    });
    call = transition(call, { type: 'validate', input: inputs.keep({}, true) }, 0);
    call = call && transition(call, { type: 'execute' }, 0);
    records.set(id, call as ToolCallRecord);
    return call as ExecutingCall;
  };
  return { records, order, clock, execution, executing };
}

describe('the runs of tools', () => {
  it('run a call’s tool once, however often they are asked', () => {
    const execute = vi.fn(() => new Promise(() => {}));
    const { execution, executing } = harness(
      defineTool({ name: 't', inputSchema: { type: 'object' }, execute }),
    );
    const call = executing('a');
    execution.run(call, note);
    execution.run(call, note);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(execution.running('a')).toBe(true);
  });

  it('cancel a call at its timeout once the run is given back, abort the tool’s signal, and drop a result that comes later', async () => {
    let finish: (value: string) => void = () => {};
    let signal: AbortSignal | undefined;
    const tool = defineTool({
      name: 't',
      inputSchema: { type: 'object' },
      timeoutMs: 100,
      execute: (_input, ctx) => {
        signal = ctx.signal;
        return new Promise<string>((resolve) => (finish = resolve));
      },
    });
    const { execution, executing, clock, records, order } = harness(tool, (scope) => ({
      ...scope,
      abandon: async () => {
        order.push('abandoned');
      },
    }));
    execution.run(executing('a'), note);
    clock.advance(99);
    expect(records.get('a')?.status).toBe('executing');
    clock.advance(1);
    expect((signal?.reason as DOMException).name).toBe('TimeoutError');
    await vi.waitFor(() => expect(records.get('a')?.status).toBe('cancelled'));
    expect(records.get('a')?.reason).toEqual({
      code: 'timeout',
      message: 'the tool did not finish within 100 ms',
    });
    finish('late');
    await Promise.resolve();
    expect(order).toEqual(['abandoned', 'cancelled']);
    expect(execution.running('a')).toBe(false);
  });

  it('never start the tool of a run stopped while the keeper opens it, and give back what the keeper took', async () => {
    const execute = vi.fn(() => 'done');
    let opened: () => void = () => {};
    const abandon = vi.fn();
    const { execution, executing, records } = harness(
      defineTool({ name: 't', inputSchema: { type: 'object' }, execute }),
      (scope) => new Promise<ExecutionScope>((resolve) => (opened = () => resolve({ ...scope, abandon }))),
    );
    execution.run(executing('a'), note);
    expect(execution.running('a')).toBe(true);
    await execution.stop('a', new DOMException('stop', 'AbortError'));
    opened();
    await vi.waitFor(() => expect(abandon).toHaveBeenCalledTimes(1));
    expect(execute).not.toHaveBeenCalled();
    expect(records.get('a')?.status).toBe('executing');
  });

  it('fail a call whose output its output schema refuses, with the issues', () => {
    const tool = defineTool({
      name: 't',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', properties: { total: { type: 'integer' } }, required: ['total'] },
      execute: () => ({ total: 'twelve' }) as never,
    });
    const { execution, executing, records } = harness(tool);
    execution.run(executing('a'), note);
    expect(records.get('a')).toMatchObject({
      status: 'failed',
      reason: { code: 'output_invalid', issues: [{ path: '/total' }] },
    });
  });

  it('commit a verified output as a frozen copy the tool can no longer change', () => {
    const made = { total: 12 };
    const { execution, executing, records } = harness(
      defineTool({ name: 't', inputSchema: { type: 'object' }, execute: () => made }),
    );
    execution.run(executing('a'), note);
    made.total = 13;
    const call = records.get('a');
    expect(call).toMatchObject({ status: 'committed', output: { total: 12 } });
    expect(Object.isFrozen(call?.output)).toBe(true);
  });
});
