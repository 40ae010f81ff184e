import { describe, expect, it, vi } from 'vitest';
import { createToolGate, defineTool } from '../src/index.ts';

const ping = defineTool({ name: 'ping', inputSchema: { type: 'object' }, execute: (input) => input });

describe('long sessions', () => {
  it('does not copy other calls when one call moves', async () => {
    const gate = createToolGate({ tools: [ping] });
    for (let i = 0; i < 50; i++) gate.propose({ id: `c${i}`, name: 'ping', arguments: '{}' });
    const before = [...gate.calls.getState().records.values()];
    gate.propose({ id: 'new', name: 'ping', arguments: '{}' });
    const after = [...gate.calls.getState().records.values()];
    expect(after.slice(0, 50)).toEqual(before);
    after.slice(0, 50).forEach((record, i) => expect(record).toBe(before[i]));
  });

  it('changes a record only when that call moves, so selectors stay cheap', () => {
    const gate = createToolGate({ tools: [ping] });
    const first = gate.propose({ id: 'a', name: 'ping', arguments: '{}' });
    gate.propose({ id: 'b', name: 'ping', arguments: '{}' });
    expect(gate.calls.getState().records.get('a')).toBe(first);
    expect(gate.calls.getState().changed).toEqual(['b']);
  });

  it('tells a call’s subscribers when that call moves, and no one else', async () => {
    let release!: () => void;
    const slow = defineTool({
      name: 'slow',
      inputSchema: { type: 'object' },
      execute: () => new Promise<string>((r) => (release = () => r('done'))),
    });
    const gate = createToolGate({ tools: [slow, ping] });
    const seen: string[] = [];
    gate.subscribeCall('s', () => seen.push(`s:${gate.get('s')?.status}`));
    const stop = gate.subscribeCall('p', () => seen.push(`p:${gate.get('p')?.status}`));
    gate.propose({ id: 's', name: 'slow', arguments: '{}' });
    gate.propose({ id: 'p', name: 'ping', arguments: '{}' });
    stop();
    gate.propose({ id: 'q', name: 'ping', arguments: '{}' });
    release();
    await gate.settled('s');
    // One notification per gate operation: propose takes a sync tool from pending to committed at once.
    expect(seen).toEqual(['s:executing', 'p:committed', 's:committed']);
  });

  it('lists every call that moved in one update', () => {
    const gate = createToolGate({ tools: [ping], retain: { settled: 1 } });
    gate.propose({ id: 'a', name: 'ping', arguments: '{}' });
    gate.propose({ id: 'b', name: 'ping', arguments: '{}' });
    // b settled and pushed a out of the retained calls: both moved.
    expect(gate.calls.getState().changed).toEqual(['b', 'a']);
  });

  it('keeps at most `retain.settled` settled calls, drops the oldest, keeps every audit event and never re-runs a dropped id', () => {
    const execute = vi.fn(() => 'pong');
    const tool = defineTool({ name: 'ping', inputSchema: { type: 'object' }, execute });
    const gate = createToolGate({ tools: [tool], retain: { settled: 3 } });
    for (let i = 0; i < 10; i++) gate.propose({ id: `c${i}`, name: 'ping', arguments: '{}' });
    expect([...gate.calls.getState().records.keys()]).toEqual(['c7', 'c8', 'c9']);
    expect(gate.get('c0')).toMatchObject({ id: 'c0', status: 'committed', evicted: true });
    expect(gate.get('c0')?.input).toBeUndefined();
    expect(gate.get('c0')?.output).toBeUndefined();
    expect(
      gate.audit
        .export()
        .filter((e) => e.callId === 'c0')
        .map((e) => e.to),
    ).toEqual(['pending', 'validated', 'executing', 'committed']);
    expect(gate.propose({ id: 'c0', name: 'ping', arguments: '{}' })).toMatchObject({
      status: 'committed',
      evicted: true,
    });
    expect(gate.toolResult('c0', 'openai-chat').content).toBe('Done.');
    expect(execute).toHaveBeenCalledTimes(10);
  });

  it('never drops a call that is still running', async () => {
    let release!: () => void;
    const slow = defineTool({
      name: 'slow',
      inputSchema: { type: 'object' },
      execute: () => new Promise<string>((r) => (release = () => r('done'))),
    });
    const gate = createToolGate({ tools: [slow, ping], retain: { settled: 1 } });
    gate.propose({ id: 'running', name: 'slow', arguments: '{}' });
    for (let i = 0; i < 5; i++) gate.propose({ id: `p${i}`, name: 'ping', arguments: '{}' });
    expect(gate.get('running')?.status).toBe('executing');
    release();
    expect((await gate.settled('running')).status).toBe('committed');
    expect([...gate.calls.getState().records.keys()]).toEqual(['running']);
  });

  it('keeps a bounded audit log when asked', () => {
    const gate = createToolGate({ tools: [ping], audit: { limit: 10 } });
    for (let i = 0; i < 100; i++) gate.propose({ name: 'ping', arguments: '{}' });
    const events = gate.audit.export();
    expect(events).toHaveLength(10);
    expect(gate.audit.size()).toBe(10);
    expect(events.at(-1)).toMatchObject({ callId: 'tg_100', to: 'committed' });
  });
});
