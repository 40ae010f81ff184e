import type { ToolGate } from '@toolgate/core';
import {
  createContext,
  useContext,
  useEffect,
  useState,
  useSyncExternalStore,
  type ReactElement,
  type ReactNode,
} from 'react';
import { onRemoteParts, shownRemoteParts } from './status-part.tsx';

const GateContext = createContext<ToolGate | undefined>(undefined);

/**
 * What {@link ToolGateProvider} takes.
 *
 * @example
 * const props: ToolGateProviderProps = { gate, children: <Chat /> };
 */
export interface ToolGateProviderProps {
  /** The gate whose calls the hooks and `<ToolCallStatus>` below read and act on. */
  readonly gate: ToolGate;
  readonly children?: ReactNode;
}

/**
 * Makes a gate available to `useToolCall`, `useToolCalls` and `<ToolCallStatus>` below it.
 * Create the gate once, outside render (module scope or `useState(() => createToolGate(...))`),
 * so that a re-render never builds a second gate that has forgotten which calls already ran.
 *
 * @example
 * const gate = createToolGate({ tools: [addToCart], store: cartStore });
 *
 * createRoot(element).render(
 *   <ToolGateProvider gate={gate}>
 *     <Chat />
 *   </ToolGateProvider>,
 * );
 */
export function ToolGateProvider({ gate, children }: ToolGateProviderProps): ReactElement {
  return <GateContext.Provider value={gate}>{children}</GateContext.Provider>;
}

/**
 * Whether a call of this gate must wait for the parts only a server gate's calls show (a refused
 * request and why, who is asked, the connection's note) before it is shown. A gate that decides on
 * the spot never needs them, so they are loaded when a remote gate's first call is shown, and that
 * call shows nothing until they are: it is never shown without why it was refused.
 *
 * @example
 * if (useRemoteParts(gate)) return null;
 */
export function useRemoteParts(gate: ToolGate): boolean {
  const remote = mirrorsServer(gate);
  // Only a remote gate's provider listens: the others would re-render for nothing, and the parts are
  // kept while something (useApprovals) renders.
  const shown =
    useSyncExternalStore(remote ? onRemoteParts : noListening, shownRemoteParts, shownRemoteParts) !==
    undefined;
  const waiting = remote && !shown;
  const [failed, setFailed] = useState<{ readonly error: unknown }>();
  useEffect(() => {
    if (!waiting) return;
    let live = true;
    loadRemoteParts().catch((error: unknown) => live && setFailed({ error }));
    return () => {
      live = false;
    };
  }, [waiting]);
  if (waiting && failed !== undefined) {
    throw new Error(
      `<ToolCallStatus> could not load the parts it shows of a server gate's calls (why a request was refused, who is asked, the connection's note), so it shows none of that gate's calls: ${String(failed.error)}`,
      { cause: failed.error },
    );
  }
  return waiting;
}

/** A remote gate (`@toolgate/core/remote`) is the one with a connection to the server it mirrors. */
function mirrorsServer(gate: ToolGate): boolean {
  const connection: unknown = (gate as { connection?: unknown }).connection;
  return (
    typeof connection === 'object' &&
    connection !== null &&
    typeof (connection as { subscribe?: unknown }).subscribe === 'function'
  );
}

const noListening = () => () => {};

let loading: Promise<void> | undefined;

function loadRemoteParts(): Promise<void> {
  if (loading !== undefined) return loading;
  const load = import('./remote-parts.tsx').then(({ showRemoteParts }) => showRemoteParts());
  // A load that failed (a chunk lost on a flaky network) is tried again by the next provider.
  loading = load.catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/**
 * The gate from the nearest {@link ToolGateProvider}. Throws when there is none.
 *
 * @example
 * function ResultMessage({ id }: { id: string }) {
 *   const gate = useToolGate();
 *   return <pre>{JSON.stringify(gate.toolResult(id, 'openai-chat'), null, 2)}</pre>;
 * }
 */
export function useToolGate(): ToolGate {
  return useGate('useToolGate');
}

/**
 * The gate, or an error that names the caller and says how to fix it.
 *
 * @example
 * const gate = useGate('MyComponent'); // throws a clear error outside <ToolGateProvider>
 */
export function useGate(caller: string): ToolGate {
  const gate = useContext(GateContext);
  if (gate === undefined) {
    throw new Error(
      `\`${caller}\` must be used within \`<ToolGateProvider gate={gate}>\`; wrap the part of your app that shows tool calls in it.`,
    );
  }
  return gate;
}
