/**
 * A remote gate's connection as a UI sees it: the feed's state, `offline` when the server looks
 * gone for now, and when the feed last delivered something, on a fake clock.
 */
import { describe, expect, it, vi } from 'vitest';
import { createRemoteConnection } from '../../src/remote/connection.ts';
import { createFakeClock } from '@toolgate/test-utils';

const down = { code: 'network_error', message: 'no answer from the server: fetch failed' };

function connectionOf(offlineAfter = 3) {
  const clock = createFakeClock();
  const events = new EventTarget();
  const wake = vi.fn();
  const connection = createRemoteConnection({ clock, offlineAfter, events, wake });
  const seen: string[] = [];
  connection.store.subscribe((state) => seen.push(state.state));
  return { connection, clock, events, wake, seen, state: () => connection.store.getState() };
}

describe('remote connection', () => {
  it('is connecting, then what the feed says; after offlineAfter failed attempts in a row it is offline, and live again once the feed is', () => {
    const { connection, clock, state, seen } = connectionOf(3);
    expect(state()).toEqual({
      state: 'connecting',
      error: undefined,
      retryAt: undefined,
      lastEventAt: undefined,
    });
    connection.feedState('live', undefined, undefined, 0);
    expect(connection.live()).toBe(true);
    // The break of a live feed is not a failed attempt; the attempts after it are.
    connection.feedState('reconnecting', down, clock.now() + 500, 0);
    connection.feedState('reconnecting', down, clock.now() + 1000, 1);
    connection.feedState('reconnecting', down, clock.now() + 2000, 2);
    expect(state()).toMatchObject({ state: 'reconnecting', retryAt: clock.now() + 2000 });
    connection.feedState('reconnecting', down, clock.now() + 4000, 3);
    expect(state()).toEqual({
      state: 'offline',
      error: down,
      retryAt: clock.now() + 4000,
      lastEventAt: undefined,
    });
    expect(connection.live()).toBe(false);
    connection.feedState('live', undefined, undefined, 0);
    expect(seen).toEqual(['live', 'reconnecting', 'reconnecting', 'reconnecting', 'offline', 'live']);
  });

  it('is offline at once while the browser says it has no network and the feed is not live; back online it wakes the feed', () => {
    const { connection, events, wake, state } = connectionOf();
    connection.feedState('live', undefined, undefined, 0);
    // A live feed stays live: a server on this machine still answers without a network.
    events.dispatchEvent(new Event('offline'));
    expect(state().state).toBe('live');
    connection.feedState('reconnecting', down, 500, 0);
    expect(state().state).toBe('offline');
    connection.feedState('reconnecting', down, 1500, 1);
    expect(state().state).toBe('offline');
    expect(wake).not.toHaveBeenCalled();
    events.dispatchEvent(new Event('online'));
    expect(state().state).toBe('reconnecting');
    expect(wake).toHaveBeenCalledTimes(1);
    events.dispatchEvent(new Event('visibilitychange'));
    expect(wake).toHaveBeenCalledTimes(2);
  });

  it('a first connection that keeps failing is offline too, and a stopped feed is closed whatever the browser says', () => {
    const { connection, events, state } = connectionOf(2);
    connection.feedState('reconnecting', down, 500, 1);
    expect(state().state).toBe('reconnecting');
    connection.feedState('reconnecting', down, 1500, 2);
    expect(state().state).toBe('offline');
    events.dispatchEvent(new Event('offline'));
    const forbidden = { code: 'unauthorized', message: 'sign in' };
    connection.feedState('closed', forbidden, undefined, 2);
    expect(state()).toMatchObject({ state: 'closed', error: forbidden });
  });

  it("keeps when the feed last delivered something, on the gate's clock, through every state", () => {
    const { connection, clock, state } = connectionOf();
    connection.feedState('live', undefined, undefined, 0);
    const started = clock.now();
    connection.heard();
    expect(state().lastEventAt).toBe(started);
    clock.advance(15_000);
    connection.heard();
    expect(state().lastEventAt).toBe(started + 15_000);
    clock.advance(7_000);
    connection.feedState('reconnecting', down, clock.now() + 500, 0);
    connection.feedState('reconnecting', down, clock.now() + 4000, 3);
    expect(state()).toMatchObject({ state: 'offline', lastEventAt: started + 15_000 });
    connection.feedState('closed', undefined, undefined, 3);
    expect(state().lastEventAt).toBe(started + 15_000);
  });

  it('tells subscribers of lastEventAt once per instant, and nothing when the feed repeats its state', () => {
    const { connection, clock } = connectionOf();
    connection.feedState('live', undefined, undefined, 0);
    const listener = vi.fn();
    connection.store.subscribe(listener);
    connection.heard();
    connection.heard();
    connection.feedState('live', undefined, undefined, 0);
    expect(listener).toHaveBeenCalledTimes(1);
    clock.advance(1);
    connection.heard();
    expect(listener).toHaveBeenCalledTimes(2);
  });

  it('stop() stops listening to the browser', () => {
    const { connection, events, wake, state } = connectionOf();
    connection.feedState('reconnecting', down, 500, 0);
    connection.stop();
    events.dispatchEvent(new Event('online'));
    events.dispatchEvent(new Event('offline'));
    expect(wake).not.toHaveBeenCalled();
    expect(state().state).toBe('reconnecting');
  });
});
