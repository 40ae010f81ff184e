import { deferred } from '@toolgate/test-utils';
import { describe, expect, it } from 'vitest';
import { createCallQueue } from '../../src/keeper/call-queue.ts';

describe('the per-call queue', () => {
  it('runs work on one call in the order asked, one at a time, and work on another call beside it', async () => {
    const queue = createCallQueue();
    const order: string[] = [];
    const first = deferred();
    const a1 = queue.exclusive('a', async () => {
      order.push('a1 start');
      await first.promise;
      order.push('a1 end');
    });
    const a2 = queue.exclusive('a', async () => {
      order.push('a2');
    });
    const b = queue.exclusive('b', async () => {
      order.push('b');
    });
    await b;
    expect(order).toEqual(['a1 start', 'b']);
    expect(queue.busy('a')).toBe(true);
    first.resolve();
    await Promise.all([a1, a2]);
    expect(order).toEqual(['a1 start', 'b', 'a1 end', 'a2']);
  });

  it('goes on after work that failed, passes the failure to its caller, and holds nothing once idle', async () => {
    const queue = createCallQueue();
    const failing = queue.exclusive('a', () => Promise.reject(new Error('database down')));
    const next = queue.exclusive('a', () => Promise.resolve('ran'));
    await expect(failing).rejects.toThrow('database down');
    await expect(next).resolves.toBe('ran');
    await Promise.resolve();
    expect(queue.busy('a')).toBe(false);
  });
});
