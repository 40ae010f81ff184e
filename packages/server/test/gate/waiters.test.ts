import type { SettledCall, ToolCallRecord } from '@toolgate/core';
import { describe, expect, it } from 'vitest';
import { createWaiters } from '../../src/gate/waiters.ts';

const record = (id: string, status: ToolCallRecord['status']) => ({ id, status }) as ToolCallRecord;

describe('the waiters of a gate', () => {
  it('resolve every resting waiter of a call at its resting point, once', async () => {
    const waiters = createWaiters();
    const first = waiters.untilResting('a');
    const second = waiters.untilResting('a');
    waiters.rested(record('a', 'executing'));
    waiters.rested(record('a', 'committed'));
    await expect(first).resolves.toMatchObject({ status: 'executing' });
    await expect(second).resolves.toMatchObject({ status: 'executing' });
  });

  it('answer undefined when another instance wrote the call first, and pass a failed move’s error on', async () => {
    const waiters = createWaiters();
    const taken = waiters.untilResting('a');
    waiters.taken('a');
    await expect(taken).resolves.toBeUndefined();
    const failing = waiters.untilResting('b');
    expect(waiters.failed('b', new Error('disk full'))).toBe(true);
    await expect(failing).rejects.toThrow('disk full');
    expect(waiters.failed('c', new Error('nobody waits'))).toBe(false);
  });

  it('settle the waiters of an ending, keep it for a later `settled`, and forget the oldest beyond a thousand', async () => {
    const waiters = createWaiters();
    const waiting = waiters.untilEnded('a');
    const cancelled = waiters.untilEnded('a');
    cancelled.cancel();
    waiters.settle(record('a', 'committed') as SettledCall);
    await expect(waiting.ended).resolves.toMatchObject({ id: 'a' });
    expect(waiters.recent('a')).toMatchObject({ status: 'committed' });
    for (let i = 0; i < 1000; i += 1) waiters.settle(record(`x${i}`, 'committed') as SettledCall);
    expect(waiters.recent('a')).toBeUndefined();
    expect(waiters.recent('x999')).toBeDefined();
  });
});
