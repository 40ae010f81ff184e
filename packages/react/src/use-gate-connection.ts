import type { RemoteConnection, ToolGate } from '@toolgate/core';
import { useCallback, useSyncExternalStore } from 'react';
import { useGate } from './provider.tsx';

/** What a gate that decides on the spot answers: it is always there. */
const HERE: RemoteConnection = Object.freeze({
  state: 'live',
  error: undefined,
  retryAt: undefined,
  lastEventAt: undefined,
});
const noop = () => {};

/**
 * The gate's connection to the server it mirrors (`@toolgate/core/remote`): `state` (`connecting`,
 * `live`, `reconnecting`, `offline`, `closed`), `error` (why it is not live), `retryAt` (when it
 * tries again) and `lastEventAt` (when the server was last heard from), on the gate's clock. It
 * re-renders when any of them changes. With a gate that decides on the spot it is always `live`.
 *
 * @example
 * function ConnectionBanner() {
 *   const { state, lastEventAt } = useGateConnection();
 *   if (state === 'live') return null;
 *   const since = lastEventAt === undefined ? '' : ` Last update at ${new Date(lastEventAt).toLocaleTimeString()}.`;
 *   return <p role="status">{state === 'offline' ? 'Offline: decisions wait until the server is back.' : 'Reconnecting…'}{since}</p>;
 * }
 */
export function useGateConnection(): RemoteConnection {
  return useConnection(useGate('useGateConnection'), whole);
}

const whole = (connection: RemoteConnection) => connection;

/**
 * One value read from the gate's connection, re-read when it changes; `select` must answer the same
 * value for the same connection (a field, or the connection itself) so that nothing else re-renders.
 *
 * @example
 * const live = useConnection(gate, (connection) => connection.state === 'live');
 */
export function useConnection<T>(gate: ToolGate, select: (connection: RemoteConnection) => T): T {
  const store = storeOf(gate);
  const subscribe = useCallback(
    (onChange: () => void) => (store === undefined ? noop : store.subscribe(onChange)),
    [store],
  );
  const read = () => select(store === undefined ? HERE : store.getState());
  return useSyncExternalStore(subscribe, read, read);
}

/** The gate's connection store, when it has one that can be read (an app's own gate may carry anything there). */
function storeOf(gate: ToolGate): ToolGate['connection'] {
  const given: unknown = (gate as { connection?: unknown }).connection;
  if (typeof given !== 'object' || given === null) return undefined;
  const { subscribe, getState } = given as { subscribe?: unknown; getState?: unknown };
  return typeof subscribe === 'function' && typeof getState === 'function'
    ? (given as ToolGate['connection'])
    : undefined;
}
