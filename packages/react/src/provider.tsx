import type { ToolGate } from '@toolgate/core';
import { createContext, useContext, type ReactElement, type ReactNode } from 'react';

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
