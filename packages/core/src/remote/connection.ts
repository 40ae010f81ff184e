import { createStore } from 'zustand/vanilla';
import type { Clock } from '../call/clock.ts';
import type { RequestError } from '../gate/call-request.ts';
import type { ReadonlyStore } from '../gate/call-store.ts';
import type { ConnectionState, RemoteConnection } from '../gate/connection.ts';
import type { FeedState } from './event-feed.ts';

/**
 * A remote gate's connection, as its UI sees it: the feed's own state, made `offline` when the
 * server looks gone for now, with the time the feed last delivered something. It also listens for
 * the browser coming back (`online`, the tab shown again) to reopen a broken feed at once.
 *
 * @example
 * const connection = createRemoteConnection({ clock, offlineAfter: 3, events: undefined, wake: () => feed.retryNow() });
 * openEventFeed({ ...options, onState: connection.feedState, onHeard: connection.heard });
 */
export interface RemoteConnectionKeeper {
  readonly store: ReadonlyStore<RemoteConnection>;
  /** What the feed reports of itself (its `onState`). */
  readonly feedState: (
    state: FeedState,
    error: RequestError | undefined,
    retryAt: number | undefined,
    failedAttempts: number,
  ) => void;
  /** The feed delivered something now (its `onHeard`). */
  readonly heard: () => void;
  readonly live: () => boolean;
  /** Stops listening to the browser. */
  readonly stop: () => void;
}

/**
 * What a remote gate's connection needs.
 *
 * @example
 * const init: RemoteConnectionInit = { clock: systemClock, offlineAfter: 3, events: window, wake: () => feed.retryNow() };
 */
export interface RemoteConnectionInit {
  readonly clock: Clock;
  /** How many failed attempts in a row to reopen the feed make it `offline` rather than `reconnecting`. */
  readonly offlineAfter: number;
  /** Where `online`, `offline` and `visibilitychange` are heard; `undefined`: the page's `window` and `document`, when there are. */
  readonly events: EventTarget | undefined;
  /** Opens a broken feed now, rather than after its backoff. */
  readonly wake: () => void;
}

/**
 * Creates a remote gate's connection, `connecting` until the feed says otherwise.
 *
 * @example
 * const connection = createRemoteConnection({ clock, offlineAfter: 3, events: undefined, wake: () => feed.retryNow() });
 */
export function createRemoteConnection(init: RemoteConnectionInit): RemoteConnectionKeeper {
  const { clock, offlineAfter, wake } = init;
  const store = createStore<RemoteConnection>()(() => ({
    state: 'connecting',
    error: undefined,
    retryAt: undefined,
    lastEventAt: undefined,
  }));
  const page = globalThis as {
    window?: EventTarget;
    document?: EventTarget & { visibilityState?: string };
    navigator?: { onLine?: unknown };
  };
  // The browser's word is trusted only when it says there is no network; `onLine: true` proves nothing.
  let browserOnline = page.navigator?.onLine !== false;
  let feed: {
    state: FeedState;
    error: RequestError | undefined;
    retryAt: number | undefined;
    failedAttempts: number;
  } = {
    state: 'connecting',
    error: undefined,
    retryAt: undefined,
    failedAttempts: 0,
  };

  function publish(): void {
    const { state, error, retryAt, failedAttempts } = feed;
    // A live feed is live even when the browser says it is offline: a server on this machine still answers.
    const gone = state !== 'live' && state !== 'closed' && (!browserOnline || failedAttempts >= offlineAfter);
    const shown: ConnectionState = gone ? 'offline' : state;
    const last = store.getState();
    if (last.state === shown && last.error === error && last.retryAt === retryAt) return;
    store.setState({ state: shown, error, retryAt, lastEventAt: last.lastEventAt }, true);
  }

  const onOnline = () => {
    browserOnline = true;
    publish();
    wake();
  };
  const onOffline = () => {
    browserOnline = false;
    publish();
  };
  const onVisibility = () => {
    if (page.document?.visibilityState !== 'hidden') wake();
  };
  const targets =
    init.events !== undefined
      ? [init.events]
      : [page.window, page.document].filter(
          (target): target is EventTarget => typeof target?.addEventListener === 'function',
        );
  for (const target of targets) {
    target.addEventListener('online', onOnline);
    target.addEventListener('offline', onOffline);
    target.addEventListener('visibilitychange', onVisibility);
  }

  return {
    store,
    feedState(state, error, retryAt, failedAttempts) {
      feed = { state, error, retryAt, failedAttempts };
      publish();
    },
    heard() {
      const at = clock.now();
      // Several chunks in one millisecond are one update.
      if (store.getState().lastEventAt !== at) store.setState({ lastEventAt: at });
    },
    live: () => store.getState().state === 'live',
    stop() {
      for (const target of targets) {
        target.removeEventListener('online', onOnline);
        target.removeEventListener('offline', onOffline);
        target.removeEventListener('visibilitychange', onVisibility);
      }
    },
  };
}
