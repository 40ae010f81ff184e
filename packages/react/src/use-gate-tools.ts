import type { ToolDefinition } from '@toolgate/core';
import { useInsertionEffect } from 'react';
import { useGate } from './provider.tsx';

/**
 * Keeps the gate's tools at `tools`, for tools made from props or state (a folder, a user, a
 * locale): when a render brings other definitions, the gate's `replaceTools` takes them, so the
 * gate (and every call it knows) stays. Calls proposed before keep the definition they were
 * proposed with; calls proposed from this render on, by this component's children included, use
 * the new one. Make the list with `useMemo` so that a render with the same props keeps the same
 * definitions (then nothing is replaced). Unmounting leaves the gate's tools as they are.
 *
 * @example
 * function FolderChat({ folder }: { folder: string }) {
 *   const tools = useMemo(() => [listFiles(folder), readFile(folder)], [folder]);
 *   useGateTools(tools);
 *   return <Transcript />;
 * }
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
export function useGateTools(tools: readonly ToolDefinition<any, any, any>[]): void {
  const gate = useGate('useGateTools');
  // An insertion effect runs before every layout effect of the commit, so a child's `useToolCall`
  // proposing in this same commit already sees the tools this render brought.
  useInsertionEffect(() => {
    if (!sameTools(gate.tools, tools)) gate.replaceTools(tools);
  });
}

function sameTools(current: readonly ToolDefinition[], next: readonly ToolDefinition[]): boolean {
  return current.length === next.length && current.every((tool, index) => tool === next[index]);
}
