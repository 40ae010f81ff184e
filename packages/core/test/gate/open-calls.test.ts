/** What a call holds while it is open: its waiters and the caller's abort signal. */
import { describe, expect, it, vi } from 'vitest';
import { createOpenCalls } from '../../src/gate/open-calls.ts';
import type { SettledCall } from '../../src/record/record.ts';

const settledCall = (id: string) => ({ id, status: 'committed' }) as SettledCall;

describe('open calls', () => {
  it('resolve every waiter of a call when it settles, and hold nothing of it after', async () => {
    const open = createOpenCalls();
    const first = open.wait('a');
    const second = open.wait('a');
    const other = vi.fn();
    void open.wait('b').then(other);
    open.settle(settledCall('a'));
    await expect(first).resolves.toMatchObject({ id: 'a' });
    await expect(second).resolves.toMatchObject({ id: 'a' });
    await Promise.resolve();
    expect(other).not.toHaveBeenCalled();
    expect(open.size()).toBe(1);
  });

  it('call onAbort once when the signal aborts, at once when it already had, and never after the call settled', () => {
    const open = createOpenCalls();
    const aborted = new AbortController();
    aborted.abort();
    const atOnce = vi.fn();
    open.watch('a', aborted.signal, atOnce);
    expect(atOnce).toHaveBeenCalledTimes(1);

    const later = new AbortController();
    const onLater = vi.fn();
    open.watch('b', later.signal, onLater);
    later.abort();
    later.abort();
    expect(onLater).toHaveBeenCalledTimes(1);

    const after = new AbortController();
    const onAfter = vi.fn();
    open.watch('c', after.signal, onAfter);
    open.settle(settledCall('c'));
    after.abort();
    expect(onAfter).not.toHaveBeenCalled();
  });
});
