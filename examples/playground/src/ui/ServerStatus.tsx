import type { ConnectionState } from '@toolgate/core';
import { useGateConnection } from '@toolgate/react';
import { useEffect, useState, type ReactElement } from 'react';

const SAID: Readonly<Record<ConnectionState, string>> = {
  connecting: 'Connecting to the server…',
  live: 'Connected to the server',
  reconnecting: 'Reconnecting to the server…',
  offline: 'Server offline — retrying',
  closed: 'Disconnected from the server',
};

/** How long ago, in words short enough for the header: "12 s ago", "3 min ago", or the time of day. */
function ago(at: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  return `at ${new Date(at).toLocaleTimeString()}`;
}

/** The clock, ticking once a second while `ticking` (until its first tick it may be old: `ago` reads a time ahead of it as now). */
function useNow(ticking: boolean): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (!ticking) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [ticking]);
  return now;
}

/**
 * Whether the page hears from the playground's server: the connection of the gate in context (the
 * mirror of the server gate).
 */
export function ServerStatus(): ReactElement {
  const { state, lastEventAt } = useGateConnection();
  return <ServerStatusLine state={state} lastEventAt={lastEventAt} />;
}

/**
 * The state is a polite live region, so that a change is announced once; how long ago the server
 * was last heard from sits beside it, out of the region, since it changes every second.
 */
export function ServerStatusLine({
  state,
  lastEventAt,
}: {
  state: ConnectionState;
  lastEventAt: number | undefined;
}): ReactElement {
  const away = state === 'reconnecting' || state === 'offline';
  const now = useNow(away);
  return (
    <p className="server-status" data-testid="server-status" data-state={state}>
      <span className="server-dot" aria-hidden="true" />
      <span role="status" aria-live="polite">
        {SAID[state]}
      </span>
      {away && lastEventAt !== undefined ? (
        <span className="server-heard">(last heard {ago(lastEventAt, now)})</span>
      ) : null}
    </p>
  );
}
