import type { CallRequest, ToolCallRecord } from '@toolgate/core';
import type { ToolgateData } from '../data-part.ts';

/**
 * The parts of useChat's state `<ToolCallStatus>` reads: the messages, and the function its own
 * approval buttons call.
 *
 * @example
 * const { messages, addToolApprovalResponse } = useChat();
 * <ToolCallStatus part={part} chat={{ messages, addToolApprovalResponse }} />
 */
export interface ChatHandle {
  readonly messages: readonly { readonly parts: readonly unknown[] }[];
  readonly addToolApprovalResponse: (response: { id: string; approved: boolean; reason?: string }) => unknown;
}

/**
 * A tool part of a useChat message (`tool-<name>` or `dynamic-tool`), the fields read here.
 *
 * @example
 * const part: ChatToolPart = { toolCallId: 'call_1', state: 'approval-requested', approval: { id: 'a1' } };
 */
export interface ChatToolPart {
  readonly toolCallId: string;
  readonly state: string;
  readonly approval?: { readonly id: string; readonly approved?: boolean } | undefined;
}

/** The latest `data-toolgate` part for a call, in whichever message it came. */
export function latestData(messages: ChatHandle['messages'], id: string): ToolgateData | undefined {
  for (let m = messages.length - 1; m >= 0; m--) {
    const parts = messages[m]?.parts ?? [];
    for (let p = parts.length - 1; p >= 0; p--) {
      const part = parts[p] as { type?: unknown; id?: unknown; data?: unknown } | undefined;
      if (part?.type === 'data-toolgate' && part.id === id && isData(part.data)) return part.data;
    }
  }
  return undefined;
}

function isData(data: unknown): data is ToolgateData {
  if (typeof data !== 'object' || data === null) return false;
  const record = (data as { record?: unknown }).record;
  return (
    typeof record === 'object' &&
    record !== null &&
    typeof (record as { status?: unknown }).status === 'string'
  );
}

/** What `<ToolCallStatus>` shows for one call: its record, and the request about it. */
export interface Shown {
  readonly record: ToolCallRecord | undefined;
  readonly request: CallRequest | undefined;
  /** The approval useChat's part waits on, if it waits on one now. */
  readonly approvalId: string | undefined;
}

/**
 * The call as the page should show it: the ledger's record, a refusal the ledger sent, or the
 * person's answer on its way (useChat's part answered, the ledger not moved yet).
 */
export function shownCall(chat: ChatHandle, part: ChatToolPart): Shown {
  const data = latestData(chat.messages, part.toolCallId);
  const record = data?.record;
  const approvalId = part.state === 'approval-requested' ? part.approval?.id : undefined;
  const answering = record?.status === 'awaiting_approval' && part.state === 'approval-responded';
  // A press after the refusal answers under a new approval id: that answer is on its way.
  const refused = data?.refusal;
  const pressedAgain =
    answering && refused?.approvalId !== undefined && refused.approvalId !== part.approval?.id;
  let request: CallRequest | undefined;
  if (refused !== undefined && !pressedAgain) {
    request = {
      action: refused.action,
      state: 'refused',
      error: { code: refused.code, message: refused.message },
    };
  } else if (answering) {
    request = { action: part.approval?.approved === false ? 'deny' : 'approve', state: 'sending' };
  }
  return { record, request, approvalId };
}
