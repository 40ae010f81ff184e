import type { ToolCallRecord, ToolGate } from '@toolgate/core';
import { useRef, useSyncExternalStore } from 'react';
import { useGate } from './provider.tsx';

/**
 * The gate's calls, in the order they were proposed, optionally filtered. The array keeps its
 * identity until a call is added, removed, or changes; the component re-renders only then.
 * `filter` may be an inline function.
 *
 * @example
 * // Everything one assistant turn asked for:
 * const calls = useToolCalls((call) => call.turn === message.id);
 * // A badge for the calls waiting on a person:
 * const waiting = useToolCalls((call) => call.status === 'awaiting_approval').length;
 */
export function useToolCalls(filter?: (call: ToolCallRecord) => boolean): readonly ToolCallRecord[] {
  return useCallList(useGate('useToolCalls'), filter, (call) => call);
}

/**
 * The ids of the gate's calls, in the order they were proposed, optionally filtered. Unlike
 * {@link useToolCalls}, the array changes only when a call joins or leaves it, not when one moves,
 * so a transcript that renders `<ToolCallStatus id>` for each id stays still while its calls run.
 *
 * @example
 * function Transcript() {
 *   const ids = useToolCallIds();
 *   return ids.map((id) => <ToolCallStatus key={id} id={id} />);
 * }
 */
export function useToolCallIds(filter?: (call: ToolCallRecord) => boolean): readonly string[] {
  return useCallList(useGate('useToolCallIds'), filter, (call) => call.id);
}

function useCallList<T>(
  gate: ToolGate,
  filter: ((call: ToolCallRecord) => boolean) | undefined,
  pick: (call: ToolCallRecord) => T,
): readonly T[] {
  const last = useRef<readonly T[]>([]);
  // The records map is updated in place, so the list is rebuilt and compared item by item, and the
  // previous array is handed back while nothing in it changed.
  const read = (): readonly T[] => {
    const next: T[] = [];
    for (const call of gate.calls.getState().records.values()) {
      if (filter === undefined || filter(call)) next.push(pick(call));
    }
    const previous = last.current;
    if (next.length !== previous.length || next.some((value, i) => value !== previous[i]))
      last.current = next;
    return last.current;
  };
  return useSyncExternalStore(gate.calls.subscribe, read, read);
}
