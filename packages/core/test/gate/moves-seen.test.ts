/**
 * A call that runs with no one asked goes from `validated` to `executing` with no app code between
 * the two moves, so the gate may make them as one. What anyone can see must not change: the final
 * record, the audit trail with each move at its own time, the record an audit listener or the tool
 * reads, and the updates subscribers hear.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createToolGate,
  defineTool,
  type AuditEvent,
  type ToolCallRecord,
  type ToolCallStatus,
} from '../../src/index.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The system clock, one millisecond later at each reading, so that every move has its own time. */
function tickingDate(): void {
  let now = 1_767_225_600_000;
  vi.spyOn(Date, 'now').mockImplementation(() => now++);
}

const order = defineTool({
  name: 'order',
  inputSchema: {
    type: 'object',
    properties: { sku: { type: 'string' } },
    required: ['sku'],
    additionalProperties: false,
  },
  repair: ['trailing_text'],
  execute: (input: { sku: string }) => ({ placed: input.sku }),
});

/** A proposal's record and audit trail on a fresh gate, with or without an audit listener attached. */
function proposed(text: string, listening: boolean): { call: ToolCallRecord; trail: AuditEvent[] } {
  tickingDate();
  const gate = createToolGate({ tools: [order] });
  const told: AuditEvent[] = [];
  if (listening) gate.audit.subscribe((event) => told.push(event));
  const call = gate.propose({ id: 'c1', name: 'order', arguments: text });
  const trail = gate.audit.export();
  if (listening) expect(told).toEqual(trail);
  vi.restoreAllMocks();
  return { call, trail };
}

describe('a call no one is asked about', () => {
  it('settles with the record and audit trail that one move at a time made, each move at its own time', () => {
    const alone = proposed('{"sku":"A-1"}', false);
    const heard = proposed('{"sku":"A-1"}', true);
    expect(alone.call).toEqual(heard.call);
    expect(alone.trail).toEqual(heard.trail);
    const t = 1_767_225_600_000;
    expect(alone.call.history).toEqual([
      { status: 'pending', at: t },
      { status: 'validated', at: t + 1 },
      { status: 'executing', at: t + 2 },
      { status: 'committed', at: t + 3 },
    ]);
    expect(alone.trail.map(({ from, to, at }) => [from, to, at])).toEqual([
      [null, 'pending', t],
      ['pending', 'validated', t + 1],
      ['validated', 'executing', t + 2],
      ['executing', 'committed', t + 3],
    ]);
    expect(Object.isFrozen(alone.call.history)).toBe(true);
    expect(alone.call.history.every((step) => Object.isFrozen(step))).toBe(true);
  });

  it('keeps its repairs on the record and on the audit event into validated, and only there', () => {
    const alone = proposed('{"sku":"A-1"} thanks!', false);
    const heard = proposed('{"sku":"A-1"} thanks!', true);
    expect(alone.call.status).toBe('committed');
    expect(alone.call.repairs).toEqual([expect.objectContaining({ kind: 'trailing_text' })]);
    expect(alone.call).toEqual(heard.call);
    expect(alone.trail).toEqual(heard.trail);
    expect(alone.trail.map((event) => event.repairs?.length ?? 0)).toEqual([0, 1, 0, 0]);
    expect(alone.trail[1]?.repairs).toBe(alone.call.repairs);
  });

  it('shows an audit listener the validated record as it hears of the move', () => {
    const gate = createToolGate({ tools: [order] });
    const seen: [ToolCallStatus, ToolCallStatus | undefined, number | undefined][] = [];
    gate.audit.subscribe((event) => {
      const call = gate.get(event.callId);
      seen.push([event.to, call?.status, call?.history.length]);
    });
    gate.propose({ id: 'c1', name: 'order', arguments: '{"sku":"A-1"}' });
    expect(seen).toEqual([
      ['pending', 'pending', 1],
      ['validated', 'validated', 2],
      ['executing', 'executing', 3],
      ['committed', 'committed', 4],
    ]);
  });

  it('shows its tool the executing record, with the validated step in its history', () => {
    let seen: ToolCallRecord | undefined;
    const watched = defineTool({
      name: 'watched',
      inputSchema: { type: 'object' },
      execute: () => {
        seen = gate.get('c1');
        return 'done';
      },
    });
    const gate = createToolGate({ tools: [watched] });
    const call = gate.propose({ id: 'c1', name: 'watched', arguments: '{}' });
    expect(seen?.status).toBe('executing');
    expect(seen?.input).toBe(call.input);
    expect(seen?.history.map((step) => step.status)).toEqual(['pending', 'validated', 'executing']);
    expect(call.history.slice(0, 3)).toEqual(seen?.history);
  });

  it('tells subscribers of a proposal once, with the settled record', () => {
    const gate = createToolGate({ tools: [order] });
    const heard: (ToolCallStatus | undefined)[] = [];
    gate.subscribeCall('c1', () => heard.push(gate.get('c1')?.status));
    const states: (readonly string[])[] = [];
    gate.calls.subscribe((state) => states.push(state.changed));
    gate.propose({ id: 'c1', name: 'order', arguments: '{"sku":"A-1"}' });
    expect(heard).toEqual(['committed']);
    expect(states).toEqual([['c1']]);
  });

  it('tells subscribers of each move when an async validator answers outside the proposal', async () => {
    const later = defineTool({
      name: 'later',
      inputSchema: {
        '~standard': {
          version: 1,
          vendor: 'test',
          validate: (value: unknown) => Promise.resolve({ value }),
        },
      },
      execute: () => 'done',
    });
    const gate = createToolGate({ tools: [later] });
    const heard: (ToolCallStatus | undefined)[] = [];
    gate.subscribeCall('c1', () => heard.push(gate.get('c1')?.status));
    gate.propose({ id: 'c1', name: 'later', arguments: '{}' });
    await gate.settled('c1');
    expect(heard).toEqual(['pending', 'validated', 'executing', 'committed']);
  });
});
