import type { Limits } from '../proposal/limits.ts';
import type { ProposalSource, Reason, Repair, SettledCall, ToolCallRecord } from '../record/record.ts';
import { textOf } from '../record/text.ts';
import type { ToolDefinition } from '../tool/tool.ts';

/**
 * The codes a stream reader may refuse a streamed call with, before its arguments are read.
 *
 * @example
 * gate.stream.refuse(id, { code: 'invalid_shape', message: 'partialArgs path $.items[-1] names no place in a JSON value' });
 */
export type StreamRefusal = 'invalid_shape' | 'too_large' | 'too_deep';

/**
 * A stream refusal as the record keeps it: its code if it is one of `StreamRefusal`, else
 * `invalid_shape`, and its message as text.
 *
 * @example
 * refusal({ code: 'too_large', message: 'the preview passed the limit' });
 */
export function refusal(reason: Reason<StreamRefusal>): Reason<StreamRefusal> {
  const code = reason.code === 'too_large' || reason.code === 'too_deep' ? reason.code : 'invalid_shape';
  return { code, message: textOf(reason.message) };
}

/**
 * Per-call options for `propose` and `run`.
 *
 * @example
 * gate.propose(part.functionCall, { id: `${messageId}:0`, turn: messageId, signal: controller.signal });
 */
export interface ProposeOptions {
  /** Use this id instead of the one in the proposal (useful for Gemini calls, which often have none). */
  readonly id?: string;
  /** The assistant turn this call belongs to, for listing a turn's calls together. */
  readonly turn?: string;
  /** Cancels the call (`user_cancelled`) when aborted. */
  readonly signal?: AbortSignal;
  /** Repairs the caller already made to reach this call (e.g. unwrapping `multi_tool_use.parallel`); recorded with the gate's own. */
  readonly repairs?: readonly Repair[];
}

/**
 * Opens a call whose arguments are still streaming in; see `gate.stream`.
 *
 * @example
 * const call = gate.stream.open({ id: 'call_1', name: 'write_file', source: 'openai-chat' });
 */
export interface StreamOpen {
  readonly id?: string;
  readonly name: string;
  readonly source: ProposalSource;
  readonly turn?: string;
}

/**
 * What a stream reader needs of a gate: a browser gate has it all, and so does a server gate's
 * `turn(...)`, which reads a model's stream into the server's ledger.
 *
 * @example
 * const reader = readOpenAIChatStream(serverGate.turn({ session, principal }));
 */
export interface StreamGate {
  /**
   * Reads, checks and starts a call, and returns its record as it stands now. Never throws for
   * model input; a proposal it cannot accept comes back `rejected` with a reason. Proposing an id
   * the gate already knows returns that call and never runs the tool again.
   */
  readonly propose: (input: unknown, options?: ProposeOptions) => ToolCallRecord;
  /** Resolves with the record once the call is terminal. Rejects only for an id the gate never saw. */
  readonly settled: (id: string) => Promise<SettledCall>;
  /**
   * Resolves with the record once the call has ended or waits for a person (`awaiting_approval`),
   * whichever comes first: what a turn's answer to the model can wait for without waiting on a
   * decision that may take days. Rejects only as `settled` does.
   */
  readonly stopped: (id: string) => Promise<ToolCallRecord>;
  readonly get: (id: string) => ToolCallRecord | undefined;
  /**
   * Cancels a call that has not ended with `user_cancelled`, aborting its tool if it is running; the
   * reason is recorded as text. Refused (`false`) while the call's result is being written to the store.
   */
  readonly cancel: (id: string, reason?: string) => boolean;
  /** The registered tools, in the order given. */
  readonly tools: readonly ToolDefinition[];
  /** The limits in force, so that stream readers can stop buffering a call that is already too large. */
  readonly limits: Limits;
  /** For provider stream readers: calls that appear before their arguments are complete. */
  readonly stream: {
    /** Creates a `pending` call as soon as its name is known. Returns the existing call for a known id. */
    readonly open: (init: StreamOpen) => ToolCallRecord;
    /** Updates a pending call's argument preview. */
    readonly preview: (id: string, preview: unknown) => void;
    /** The arguments are complete: check them and go on as `propose` would. */
    readonly close: (id: string, rawArguments: unknown) => ToolCallRecord | undefined;
    /** The provider cut the call off: reject it with `truncated`. */
    readonly truncate: (id: string, message?: string) => ToolCallRecord | undefined;
    /**
     * The stream says something about the call's arguments that no JSON value can be (a path that
     * names no place in one, say): reject it now with this reason; nothing of it runs.
     */
    readonly refuse: (id: string, reason: Reason<StreamRefusal>) => ToolCallRecord | undefined;
    /**
     * The turn is over (its stream ended, broke off or was aborted): no call is opened or proposed
     * in it any more. Told once, after each call's end above, with the turn's id (if it has one) and
     * its call ids in the provider's order. A gate that keeps turns (a server gate's `turn(...)`)
     * records the turn here; one that does not leaves this out.
     */
    readonly end?: (turn: { readonly id: string | undefined; readonly calls: readonly string[] }) => void;
  };
}
