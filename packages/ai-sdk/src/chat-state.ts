import type { ToolCallRecord } from '@toolgate/core';
import type { ServerGate } from '@toolgate/server';
import type { ToolgateRefusal } from './data-part.ts';
import type { SessionView } from './session-view.ts';

/** What one chat request's tools and history share. */
export interface ChatState {
  readonly gate: ServerGate;
  readonly session: string;
  readonly principal: string;
  readonly view: SessionView;
  /** Records read or proposed during this request, by call id. */
  readonly known: Map<string, ToolCallRecord>;
  /**
   * Calls `messages()` handed back to the SDK as approved by a person (the ledger ran them or runs
   * them now): the SDK asks `needsApproval` about them again, then `execute` for their result.
   */
  readonly approved: Set<string>;
  /**
   * The history as `messages()` last answered it: the UI stream continues its last message when
   * that is the assistant's (the answer to an approval), under the same message id.
   */
  history: unknown[] | undefined;
  /** Writes the call's record as a `data-toolgate` part (nowhere without a writer). */
  readonly emit: (record: ToolCallRecord, refusal?: ToolgateRefusal) => void;
  /** Puts the call's tool part back to `approval-requested` under a new approval id (nowhere without a writer). */
  readonly askAgain: (id: string) => void;
  /** Shows an ended call's outcome in its useChat tool part, where the SDK will not stream it. */
  readonly showOutcome: (record: ToolCallRecord) => void;
}
