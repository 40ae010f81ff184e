import type { RequestError } from './call-request.ts';

/**
 * Where a gate that mirrors a server (`@toolgate/core/remote`) stands with that server's event feed:
 * - `connecting`: opening the feed for the first time;
 * - `live`: open and delivering; decisions are sent;
 * - `reconnecting`: the feed broke and is being opened again, after a backoff of a few seconds;
 * - `offline`: the feed is not live and the server looks gone for now, because the browser says it
 *   has no network, or the last few attempts to reopen the feed all failed. It is still retried,
 *   and at once when the browser is back online or the tab is shown again;
 * - `closed`: stopped by `close()`, or by an answer that asking again cannot change (401, 403, 404).
 *
 * Only `live` sends decisions: one made in any other state is refused (`offline`) where the person
 * sees it.
 *
 * @example
 * const state: ConnectionState = 'reconnecting';
 */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'offline' | 'closed';

/**
 * A gate's connection to the server it mirrors, for a UI to show: its state, why it is not live,
 * when it tries again, and when the server was last heard from.
 *
 * @example
 * gate.connection.subscribe(({ state, error }) => banner(state === 'live' ? '' : `Offline: ${error?.message ?? state}`));
 */
export interface RemoteConnection {
  readonly state: ConnectionState;
  /** Why the feed is reconnecting, offline or stopped; `undefined` while it is connecting or live, and after `close()`. */
  readonly error: RequestError | undefined;
  /** When the next attempt starts (the gate's clock time), while reconnecting or offline. */
  readonly retryAt: number | undefined;
  /**
   * When the feed last delivered something (a snapshot, a move or a heartbeat), on the gate's
   * clock; `undefined` until it first did. While not live, it is how old the page's view may be.
   */
  readonly lastEventAt: number | undefined;
}
