import { describe, expect, it, vi } from 'vitest';
import { createToolGate, defineTool, type AuditEvent } from '../src/index.ts';
import { createFakeClock } from '@toolgate/test-utils';

describe('audit', () => {
  it('records every transition as { callId, from, to, at, reason? } in order, and history matches', async () => {
    const clock = createFakeClock(1000);
    const tool = defineTool({
      name: 'pay',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: () => 'paid',
    });
    const gate = createToolGate({ tools: [tool], clock });
    const seen: AuditEvent[] = [];
    gate.audit.subscribe((e) => seen.push(e));
    gate.propose({ id: 'a', name: 'pay', arguments: '{}' });
    clock.advance(50);
    gate.deny('a', 'no thanks');
    gate.propose({ id: 'b', name: 'nope', arguments: '{}' });
    expect(seen).toEqual([
      { callId: 'a', name: 'pay', from: null, to: 'pending', at: 1000 },
      { callId: 'a', name: 'pay', from: 'pending', to: 'validated', at: 1000 },
      { callId: 'a', name: 'pay', from: 'validated', to: 'awaiting_approval', at: 1000 },
      {
        callId: 'a',
        name: 'pay',
        from: 'awaiting_approval',
        to: 'cancelled',
        at: 1050,
        reason: { code: 'approval_denied', message: 'no thanks' },
      },
      { callId: 'b', name: 'nope', from: null, to: 'pending', at: 1050 },
      {
        callId: 'b',
        name: 'nope',
        from: 'pending',
        to: 'rejected',
        at: 1050,
        reason: expect.objectContaining({ code: 'unknown_tool' }),
      },
    ]);
    expect(gate.audit.export()).toEqual(seen);
    expect(gate.get('a')?.history.map((h) => [h.status, h.at])).toEqual([
      ['pending', 1000],
      ['validated', 1000],
      ['awaiting_approval', 1000],
      ['cancelled', 1050],
    ]);
  });

  it('exports a copy that callers cannot change', () => {
    const gate = createToolGate({ tools: [] });
    gate.propose({ name: 'x' });
    const copy = gate.audit.export();
    copy.length = 0;
    expect(gate.audit.export()).toHaveLength(2);
  });

  it('stops telling a listener after it unsubscribes', () => {
    const gate = createToolGate({ tools: [] });
    const listener = vi.fn();
    const stop = gate.audit.subscribe(listener);
    gate.propose({ name: 'x' });
    stop();
    gate.propose({ name: 'y' });
    expect(listener).toHaveBeenCalledTimes(2);
  });

  it('keeps going when a listener throws, and reports the error', () => {
    const onError = vi.fn();
    const gate = createToolGate({ tools: [], onError });
    gate.audit.subscribe(() => {
      throw new Error('listener bug');
    });
    expect(gate.propose({ name: 'x' }).status).toBe('rejected');
    expect(onError).toHaveBeenCalledTimes(2);
  });

  it('keeps going when a calls-store subscriber throws', () => {
    const onError = vi.fn();
    const tool = defineTool({ name: 'ok', inputSchema: { type: 'object' }, execute: () => 1 });
    const gate = createToolGate({ tools: [tool], onError });
    gate.calls.subscribe(() => {
      throw new Error('ui bug');
    });
    expect(gate.propose({ name: 'ok', arguments: '{}' }).status).toBe('committed');
    expect(onError).toHaveBeenCalled();
  });

  it('exports the same frozen events whether or not a listener was told of them, and within its limit', () => {
    const clock = createFakeClock(1000);
    const tool = defineTool({ name: 'ok', inputSchema: { type: 'object' }, execute: () => 1 });
    const gate = createToolGate({ tools: [tool], clock, audit: { limit: 5 } });
    gate.propose({ id: 'a', name: 'ok', arguments: '{}' });
    const seen: AuditEvent[] = [];
    const stop = gate.audit.subscribe((e) => seen.push(e));
    clock.advance(1);
    gate.propose({ id: 'b', name: 'nope', arguments: '{}' });
    stop();
    const exported = gate.audit.export();
    expect(exported).toEqual([
      { callId: 'a', name: 'ok', from: 'pending', to: 'validated', at: 1000 },
      { callId: 'a', name: 'ok', from: 'validated', to: 'executing', at: 1000 },
      { callId: 'a', name: 'ok', from: 'executing', to: 'committed', at: 1000 },
      { callId: 'b', name: 'nope', from: null, to: 'pending', at: 1001 },
      {
        callId: 'b',
        name: 'nope',
        from: 'pending',
        to: 'rejected',
        at: 1001,
        reason: expect.objectContaining({ code: 'unknown_tool' }),
      },
    ]);
    // Six moves, the first of them dropped by the limit.
    expect(gate.audit.size()).toBe(5);
    // The events a listener was told of are the ones exported, and an exported event stays itself.
    expect(exported.slice(-2)).toEqual(seen);
    expect(exported[3]).toBe(seen[0]);
    expect(gate.audit.export()[0]).toBe(exported[0]);
    for (const event of exported) expect(Object.isFrozen(event)).toBe(true);
  });
});
