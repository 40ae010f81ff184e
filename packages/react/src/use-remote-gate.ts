import {
  createRemoteGate,
  type RemoteGate,
  type RemoteGateOptions,
  type RemoteInboxOptions,
} from '@toolgate/core/remote';
import { useEffect, useRef, useState } from 'react';
import { showRemoteParts } from './remote-parts.tsx';

/**
 * A gate that mirrors a server gate (`@toolgate/core/remote`), made when the component mounts and
 * closed when it unmounts. A new gate is made when what it follows changes (`url`, `baseUrl`,
 * `session` or `inbox`): the feed of one chat never shows in another. The other options (tools,
 * store, headers, …) are read when the gate is made, so an inline object or function does not
 * open the feed again on every render. `undefined` until the first effect has run (the server
 * render and the first client render show no calls), then the gate: render the provider when it
 * is there.
 *
 * @example
 * function Chat({ chatId }: { chatId: string }) {
 *   const gate = useRemoteGate({ url: '/api/toolgate', session: chatId, tools: [addToCart], store: cart });
 *   if (gate === undefined) return null;
 *   return <ToolGateProvider gate={gate}><Transcript /></ToolGateProvider>;
 * }
 */
export function useRemoteGate<S = unknown>(options: RemoteGateOptions<S>): RemoteGate | undefined;
export function useRemoteGate(options: RemoteInboxOptions): RemoteGate | undefined;
export function useRemoteGate(
  options: RemoteGateOptions<unknown> | RemoteInboxOptions,
): RemoteGate | undefined {
  showRemoteParts();
  const [gate, setGate] = useState<RemoteGate>();
  const latest = useRef(options);
  // Runs before the effect below (effects run in order), so a new gate is made from this render's options.
  useEffect(() => {
    latest.current = options;
  });
  const followed = followedBy(options);
  useEffect(() => {
    const remote = createRemoteGate(latest.current as RemoteGateOptions<unknown>);
    setGate(remote);
    return () => {
      remote.close();
      // A gate closed here is never handed out again, even for one render before the new one.
      setGate((current) => (current === remote ? undefined : current));
    };
  }, [followed]);
  return gate;
}

/** What a gate follows, as one string: when it changes, the gate must be another. */
function followedBy(options: RemoteGateOptions<unknown> | RemoteInboxOptions): string {
  const { url, baseUrl, session, inbox } = options as {
    url?: unknown;
    baseUrl?: unknown;
    session?: unknown;
    inbox?: unknown;
  };
  return JSON.stringify([url ?? null, baseUrl ?? null, session ?? null, inbox === true]);
}
