/** A remote gate's records: what it tells its gate when a call moves or ends, and `settled(id)`. */
import { describe, expect, it, vi } from 'vitest';
import { createMirror } from '../../src/remote/mirror.ts';
import { wireRecord } from '@toolgate/test-utils';

const input = { amount_cents: 1250, currency: 'USD' };

function mirrorOf() {
  const onMoved = vi.fn();
  const onSettled = vi.fn();
  const onError = vi.fn();
  return { mirror: createMirror({ onError, onMoved, onSettled }), onMoved, onSettled, onError };
}

describe('remote mirror', () => {
  it('tells its gate when a known call changes status, and when a call ends, not when only its record changes', () => {
    const { mirror, onMoved, onSettled } = mirrorOf();
    mirror.put(wireRecord('c1', 'charge', input, 'awaiting_approval'));
    expect(onMoved).not.toHaveBeenCalled();
    mirror.put(wireRecord('c1', 'charge', { ...input, amount_cents: 1000 }, 'awaiting_approval'));
    expect(onMoved).not.toHaveBeenCalled();
    mirror.put(wireRecord('c1', 'charge', input, 'executing'));
    expect(onMoved).toHaveBeenCalledWith('c1');
    expect(onSettled).not.toHaveBeenCalled();
    const done = wireRecord('c1', 'charge', input, 'committed', { output: input });
    mirror.put(done);
    expect(onSettled).toHaveBeenCalledWith(done);
    expect(mirror.open()).toEqual([]);
  });

  it('settled(id) answers a call that ended at once, waits for one that has not, and is rejected once closed', async () => {
    const { mirror } = mirrorOf();
    mirror.put(wireRecord('done', 'charge', input, 'cancelled'));
    mirror.put(wireRecord('running', 'charge', input, 'executing'));
    await expect(mirror.settled('done')).resolves.toMatchObject({ id: 'done', status: 'cancelled' });
    const running = mirror.settled('running');
    const never = mirror.settled('unknown').then(
      () => 'settled',
      (error: Error) => error.message,
    );
    mirror.put(wireRecord('running', 'charge', input, 'failed'));
    await expect(running).resolves.toMatchObject({ id: 'running', status: 'failed' });
    mirror.close();
    await expect(never).resolves.toBe(
      'gate.settled: the remote gate was closed before call "unknown" settled.',
    );
    await expect(mirror.settled('later')).rejects.toThrow(
      'gate.settled: the remote gate is closed, and call "later" has not settled.',
    );
    await expect(mirror.settled('done')).resolves.toMatchObject({ status: 'cancelled' });
  });

  it('publishes only when told, as one update naming the calls, and a per-call subscriber hears its own call', () => {
    const { mirror } = mirrorOf();
    const updates: (readonly string[])[] = [];
    mirror.calls.subscribe((state) => updates.push(state.changed));
    const c2 = vi.fn();
    mirror.subscribeCall('c2', c2);
    mirror.put(wireRecord('c1', 'charge', input, 'awaiting_approval'));
    mirror.put(wireRecord('c2', 'charge', input, 'awaiting_approval'));
    expect(updates).toEqual([]);
    mirror.publish(['c1', 'c2']);
    mirror.publish(['c1']);
    expect(updates).toEqual([['c1', 'c2'], ['c1']]);
    expect(c2).toHaveBeenCalledTimes(1);
    mirror.clear();
    expect(mirror.get('c1')).toBeUndefined();
    expect([...mirror.ids()]).toEqual([]);
  });
});
