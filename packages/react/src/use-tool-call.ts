import { DEFAULT_LIMITS, readProposal } from '@toolgate/core/kit';
import {
  isCallOf,
  type CallRequest,
  type InputOf,
  type OutputOf,
  type ProposeOptions,
  type Resolution,
  type ToolCallRecord,
  type ToolDefinition,
  type ToolGate,
} from '@toolgate/core';
import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  useSyncExternalStore,
} from 'react';
import { useGate } from './provider.tsx';
import type { ToolCallControls } from './status-part.tsx';

export type { ToolCallControls } from './status-part.tsx';

/**
 * What {@link useToolCall} takes beside the proposal: the gate's `propose` options, and the tool
 * whose input and output types the record should carry.
 *
 * @example
 * const options: UseToolCallOptions<typeof charge> = { tool: charge, turn: message.id };
 */
export interface UseToolCallOptions<
  T extends ToolDefinition = ToolDefinition<unknown, unknown>,
> extends ProposeOptions {
  /**
   * Types `call` with this tool's input and output. A call of another tool reads as `undefined`,
   * so the types never claim more than the record holds.
   */
  readonly tool?: T;
}

/**
 * The live record of one call, and what a person can do to it. `call` is `undefined` until the
 * gate knows the call; narrow it by `status` to reach `preview`, `input`, `output` or `reason`.
 *
 * @example
 * const { call, approve } = useToolCall(part, { tool: charge });
 * if (call?.status === 'awaiting_approval') return <button onClick={approve}>Pay {call.input.amount_cents}</button>;
 */
export interface UseToolCallResult<I = unknown, O = unknown> extends ToolCallControls {
  readonly call: ToolCallRecord<I, O> | undefined;
  /**
   * With a gate that sends approvals to a server (`@toolgate/core/remote`): the request about this
   * call that is on its way (`sending`) or was refused (`refused`, with the server's `error`).
   * Always `undefined` with a gate that decides on the spot.
   */
  readonly request: CallRequest | undefined;
}

// Proposing in a layout effect puts the call's first status in the first painted frame. Servers run
// no effects (nothing is proposed there), and React 18 warns about layout effects on the server.
const useProposeEffect = typeof document === 'undefined' ? useEffect : useLayoutEffect;

/**
 * Follows one tool call. Given a call id (a string), it only reads. Given a proposal (any shape
 * `gate.propose` accepts: an OpenAI `tool_calls[]` entry, an Anthropic `tool_use` block, an AI SDK
 * part, …) it proposes it once per call id, after the component mounts: StrictMode's double effects,
 * re-renders, remounts and other components showing the same call never run the tool twice.
 * A proposal without an id of its own (some Gemini and MCP calls) needs `options.id` to be
 * recognised after a remount; without one it is proposed once per mounted component.
 *
 * The component re-renders only when its own call changes, including each argument `preview`
 * while a call is still streaming. `approve`, `deny`, `cancel`, `resolve` and `compensate` keep their identity for a given call.
 *
 * @example
 * function ChargeCard({ part }: { part: AnthropicToolUse }) {
 *   const { call, approve, deny } = useToolCall(part, { tool: charge });
 *   if (call === undefined) return null;
 *   switch (call.status) {
 *     case 'pending':
 *       return <p>Preparing a charge… {JSON.stringify(call.preview)}</p>;
 *     case 'awaiting_approval':
 *       return (
 *         <p>
 *           Charge {call.input.amount_cents / 100} {call.input.currency}?
 *           <button onClick={approve}>Approve</button> <button onClick={() => deny()}>Deny</button>
 *         </p>
 *       );
 *     case 'committed':
 *       return <p>Charged. Receipt {call.output.receipt}</p>;
 *     case 'rejected':
 *     case 'cancelled':
 *     case 'failed':
 *       return <p>Not charged: {call.reason.message}</p>;
 *     default:
 *       return <p>Charging…</p>;
 *   }
 * }
 */
export function useToolCall<T extends ToolDefinition = ToolDefinition<unknown, unknown>>(
  proposalOrId: string | object | undefined,
  options?: UseToolCallOptions<T>,
): UseToolCallResult<InputOf<T>, OutputOf<T>> {
  const gate = useGate('useToolCall');
  const proposal = typeof proposalOrId === 'object' ? proposalOrId : undefined;
  const named = typeof proposalOrId === 'string' ? proposalOrId : (options?.id ?? idOf(proposal));
  // The id the gate made for a proposal that carried none, and what that proposal said. The ref
  // outlives StrictMode's effect replay, which would otherwise propose the id-less call a second
  // time; a proposal that says something else (the component moved on to another call) is new.
  const own = useRef<{ readonly gate: ToolGate; readonly said: unknown; readonly id: string }>(undefined);
  const [ownId, setOwnId] = useState<string>();

  useProposeEffect(() => {
    if (proposal === undefined) return;
    if (named !== undefined) {
      gate.propose(proposal, options);
      return;
    }
    const said = contentOf(proposal);
    if (own.current?.gate !== gate || own.current.said !== said)
      own.current = { gate, said, id: gate.propose(proposal, options).id };
    setOwnId(own.current.id);
  }, [gate, proposal, named, options]);

  const id = named ?? ownId;
  const record = useCall(gate, id);
  const request = useCallRequest(gate, id);
  const controls = useControls(gate, id);
  const tool = options?.tool;
  const call = tool === undefined || isCallOf(tool, record) ? record : undefined;
  return { ...controls, call: call as ToolCallRecord<InputOf<T>, OutputOf<T>> | undefined, request };
}

/**
 * Subscribes to one call. `same` lets a caller keep its last snapshot through changes it does not
 * show, so that those changes do not re-render it.
 *
 * @example
 * const call = useCall(gate, id); // re-renders only when this call moves
 */
export function useCall(
  gate: ToolGate,
  id: string | undefined,
  same?: (last: ToolCallRecord, next: ToolCallRecord) => boolean,
): ToolCallRecord | undefined {
  const last = useRef<ToolCallRecord | undefined>(undefined);
  const read = (): ToolCallRecord | undefined => {
    const next = id === undefined ? undefined : gate.get(id);
    if (last.current === undefined || next === undefined || same === undefined || !same(last.current, next))
      last.current = next;
    return last.current;
  };
  // Subscribing to this one call keeps a transition's cost independent of how many calls are on screen.
  const subscribe = useCallback(
    (onChange: () => void) => (id === undefined ? noop : gate.subscribeCall(id, onChange)),
    [gate, id],
  );
  return useSyncExternalStore(subscribe, read, read);
}

/**
 * The request about one call that the gate is sending or that was refused (see `gate.requestOf`),
 * re-read when that call is told about. Costs no subscription with a gate that has no requests.
 *
 * @example
 * const request = useCallRequest(gate, id); // { action: 'approve', state: 'sending' } while it is on its way
 */
export function useCallRequest(gate: ToolGate, id: string | undefined): CallRequest | undefined {
  const subscribe = useCallback(
    (onChange: () => void) =>
      id === undefined || gate.requestOf === undefined ? noop : gate.subscribeCall(id, onChange),
    [gate, id],
  );
  const read = (): CallRequest | undefined => (id === undefined ? undefined : gate.requestOf?.(id));
  return useSyncExternalStore(subscribe, read, read);
}

/**
 * `approve`, `deny`, `cancel`, `resolve` and `compensate` bound to one call, stable while the gate and the id are.
 *
 * @example
 * const { approve, deny, cancel } = useControls(gate, id);
 */
export function useControls(gate: ToolGate, id: string | undefined): ToolCallControls {
  return useMemo(
    () => ({
      approve: () => id !== undefined && gate.approve(id),
      approveEdited: (input: unknown) => id !== undefined && gate.approve(id, { input }),
      deny: (reason?: string) => id !== undefined && gate.deny(id, reason),
      cancel: (reason?: string) => id !== undefined && gate.cancel(id, reason),
      resolve: (resolution: Resolution) => id !== undefined && (gate.resolve?.(id, resolution) ?? false),
      compensate: (reason?: string) => id !== undefined && (gate.compensate?.(id, reason) ?? false),
    }),
    [gate, id],
  );
}

const noop = () => () => {};

/** What a proposal says, to tell a new id-less call from the same one passed again as a new object. */
function contentOf(proposal: object): unknown {
  try {
    return JSON.stringify(proposal);
  } catch {
    return proposal; // not JSON (a cycle, a throwing getter): fall back to the object itself
  }
}

function idOf(proposal: object | undefined): string | undefined {
  if (proposal === undefined) return undefined;
  try {
    const reading = readProposal(proposal, DEFAULT_LIMITS);
    return reading.ok ? reading.proposal.id : reading.id;
  } catch {
    // A hostile object (a throwing getter): `propose` turns it into a rejected call with an id of its own.
    return undefined;
  }
}
