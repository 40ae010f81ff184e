import type { ToolCallRecord } from '@toolgate/core';
import type { DecisionCode } from '@toolgate/server';

/**
 * A decision the ledger refused when `chat.messages()` applied the approval response a tool part
 * carried: which answer it was, and the gate's code and sentence (`stale` for an approval of
 * another input than the call holds, `expired`, `forbidden`, …). The call did not move.
 *
 * @example
 * const refusal: ToolgateRefusal = { action: 'approve', code: 'stale', message: 'the approval names other arguments than the call holds' };
 */
export interface ToolgateRefusal {
  readonly action: 'approve' | 'deny';
  readonly code: DecisionCode;
  readonly message: string;
  /**
   * The refused answer's approval (the part's `approval.id`). The part is asked again under a new
   * one, so this answer, sent again with a later message, is never taken for a new press.
   */
  readonly approvalId?: string;
}

/**
 * What a `data-toolgate` part carries: the call's record as the ledger has it (its status, its
 * validated input, its output once committed, its reason once it ended otherwise), and the
 * refusal of the last answer given to it, if the ledger refused one.
 *
 * @example
 * const data: ToolgateData = part.data;
 * if (data.record.status === 'rejected') console.log(data.record.reason.issues);
 */
export interface ToolgateData {
  readonly record: ToolCallRecord;
  readonly refusal?: ToolgateRefusal;
}

/**
 * The data parts toolgate adds to an assistant message, one per call (its `id` is the call id, so
 * each new one replaces the last): type a chat's messages with it, beside the tools.
 *
 * @example
 * type ChatMessage = UIMessage<unknown, ToolgateDataTypes, InferUITools<typeof chat.tools>>;
 */
// A type alias, not an interface: UIMessage wants a type that fits `Record<string, unknown>`.
export type ToolgateDataTypes = { toolgate: ToolgateData };

/**
 * The one chunk toolgate writes into a UI message stream.
 *
 * @example
 * const chunk: ToolgateDataChunk = { type: 'data-toolgate', id: record.id, data: { record } };
 */
export interface ToolgateDataChunk {
  readonly type: 'data-toolgate';
  readonly id: string;
  readonly data: ToolgateData;
}

/**
 * The AI SDK chunks toolgate writes to move a useChat tool part the SDK will not move itself: a part
 * whose answer the ledger refused goes back to `approval-requested` under a new approval id (the
 * page offers Approve and Deny again; nothing runs until a new press), and a part answered again
 * in an earlier step of the message gets the ledger's outcome.
 *
 * @example
 * const chunk: ToolgatePartChunk = { type: 'tool-approval-request', toolCallId: 'call_1', approvalId: 'toolgate-…' };
 */
export type ToolgatePartChunk =
  | { readonly type: 'tool-approval-request'; readonly toolCallId: string; readonly approvalId: string }
  | { readonly type: 'tool-output-available'; readonly toolCallId: string; readonly output: unknown }
  | { readonly type: 'tool-output-denied'; readonly toolCallId: string }
  | { readonly type: 'tool-output-error'; readonly toolCallId: string; readonly errorText: string };

/**
 * Where toolgate writes its chunks: the `writer` of `createUIMessageStream({ execute })`, or
 * anything with the same `write`.
 *
 * @example
 * createUIMessageStream({ execute: ({ writer }) => { const chat = toolgateChat(gate, { session, principal, writer }); … } });
 */
export interface ToolgateWriter {
  write(chunk: ToolgateDataChunk | ToolgatePartChunk): void;
}

export function dataChunk(record: ToolCallRecord, refusal?: ToolgateRefusal): ToolgateDataChunk {
  return {
    type: 'data-toolgate',
    id: record.id,
    data: refusal === undefined ? { record } : { record, refusal },
  };
}
