import { createStore } from 'zustand/vanilla';
import type { RequestError } from '../gate/call-request.ts';
import type { ReadonlyStore } from '../gate/call-store.ts';
import type { ConnectionState } from './event-feed.ts';

/**
 * Where a remote gate's event feed is, and why it is not live when it is not.
 *
 * @example
 * gate.connection.subscribe(({ state, error }) => banner(state === 'live' ? '' : `Offline: ${error?.message ?? state}`));
 */
export interface RemoteConnection {
  readonly state: ConnectionState;
  /** Why the feed is reconnecting or stopped; `undefined` while it is connecting or live, and after `close()`. */
  readonly error: RequestError | undefined;
  /** When the next attempt starts (the clock's time), while reconnecting. */
  readonly retryAt: number | undefined;
}

/**
 * A remote gate's connection, as its UI sees it: the feed's own state. It also listens for the
 * browser coming back (`online`, the tab shown again) to reopen a broken feed at once.
 *
 * @example
 * const connection = createRemoteConnection({ events: undefined, wake: () => feed.retryNow() });
 * openEventFeed({ ...options, onState: connection.feedState });
 */
export interface RemoteConnectionKeeper {
  readonly store: ReadonlyStore<RemoteConnection>;
  /** What the feed reports of itself (its `onState`). */
  readonly feedState: (state: ConnectionState, error: RequestError | undefined, retryAt: number | undefined) => void;
  readonly live: () => boolean;
  /** Stops listening to the browser. */
  readonly stop: () => void;
}

/**
 * What a remote gate's connection needs.
 *
 * @example
 * const init: RemoteConnectionInit = { events: window, wake: () => feed.retryNow() };
 */
export interface RemoteConnectionInit {
  /** Where `online` and `visibilitychange` are heard; `undefined`: the page's `window` and `document`, when there are. */
  readonly events: EventTarget | undefined;
  /** Opens a broken feed now, rather than after its backoff. */
  readonly wake: () => void;
}

/**
 * Creates a remote gate's connection, `connecting` until the feed says otherwise.
 *
 * @example
 * const connection = createRemoteConnection({ events: undefined, wake: () => feed.retryNow() });
 */
export function createRemoteConnection(init: RemoteConnectionInit): RemoteConnectionKeeper {
  const { wake } = init;
  const store = createStore<RemoteConnection>()(() => ({ state: 'connecting', error: undefined, retryAt: undefined }));
  const page = globalThis as { window?: EventTarget; document?: EventTarget & { visibilityState?: string } };
  const onVisibility = () => {
    if (page.document?.visibilityState !== 'hidden') wake();
  };
  const targets = init.events !== undefined ? [init.events] : [page.window, page.document].filter((target): target is EventTarget => typeof target?.addEventListener === 'function');
  for (const target of targets) {
    target.addEventListener('online', wake);
    target.addEventListener('visibilitychange', onVisibility);
  }

  return {
    store,
    feedState: (state, error, retryAt) => store.setState({ state, error, retryAt }, true),
    live: () => store.getState().state === 'live',
    stop() {
      for (const target of targets) {
        target.removeEventListener('online', wake);
        target.removeEventListener('visibilitychange', onVisibility);
      }
    },
  };
}
