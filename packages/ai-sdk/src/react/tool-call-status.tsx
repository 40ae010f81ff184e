import type { ToolGate } from '@toolgate/core';
import {
  ToolCallStatus as CallStatus,
  ToolCallStatusActions,
  ToolCallStatusInput,
  ToolCallStatusLabel,
  ToolCallStatusReason,
  ToolCallStatusRefusal,
  ToolGateProvider,
  type ToolCallStatusProps as CallStatusProps,
} from '@toolgate/react';
import { forwardRef, useRef, useState } from 'react';
import { shownCall, type ChatHandle, type ChatToolPart, type Shown } from './chat-calls.ts';

/**
 * What {@link ToolCallStatus} takes: a useChat tool part, the chat it belongs to, and anything
 * `@toolgate/react`'s `<ToolCallStatus>` takes (labels, `<div>` attributes, children).
 *
 * @example
 * const props: ChatToolCallStatusProps = { part, chat: { messages, addToolApprovalResponse } };
 */
export interface ChatToolCallStatusProps extends Omit<CallStatusProps, 'id' | 'call' | 'part'> {
  /** The tool part (`tool-<name>` or `dynamic-tool`) of a useChat message. */
  readonly part: ChatToolPart;
  /** useChat's `messages` and `addToolApprovalResponse`. */
  readonly chat: ChatHandle;
}

/**
 * toolgate's status for a tool part of a useChat chat, from the `data-toolgate` parts the route
 * streams (`chat.toUIMessageStreamResponse`): running, refused with each offending path,
 * interrupted, denied, done; and a refused approval (`stale`, `expired`, `forbidden`) with the
 * ledger's reason. Its Approve and Deny answer through useChat's `addToolApprovalResponse`, as
 * useChat's own buttons do, so either moves both: the answer goes to the server with the next
 * request, where the ledger decides. The same accessible markup as `@toolgate/react`'s
 * `<ToolCallStatus>` (`data-status`, `data-reason`, a polite live region), styled the same way.
 *
 * @example
 * import { ToolCallStatus } from '@toolgate/ai-sdk/react';
 * import '@toolgate/react/styles.css';
 *
 * const { messages, addToolApprovalResponse } = useChat({ sendAutomaticallyWhen: toolgateSendAutomaticallyWhen });
 * // in a tool part:
 * <ToolCallStatus part={part} chat={{ messages, addToolApprovalResponse }} />
 */
export const ToolCallStatus = forwardRef<HTMLDivElement, ChatToolCallStatusProps>(function ToolCallStatus(
  { part, chat, children, ...props },
  ref,
) {
  const shown = shownCall(chat, part);
  const current = useRef({ shown, chat });
  current.current = { shown, chat };
  const [gate] = useState(() => chatGate(part.toolCallId, current));
  return (
    <ToolGateProvider gate={gate}>
      <CallStatus
        {...props}
        {...(shown.record === undefined ? {} : { call: shown.record })}
        ref={ref}
        id={part.toolCallId}
        data-chat-state={part.state}
      >
        {children ?? (
          <>
            <ToolCallStatusLabel />
            {/* What Approve approves, from the same record: Approve is enabled only once it is shown. */}
            <ToolCallStatusInput />
            <ToolCallStatusReason />
            <ToolCallStatusRefusal />
            {shown.approvalId !== undefined && shown.record?.status === 'awaiting_approval' && (
              <ToolCallStatusActions />
            )}
          </>
        )}
      </CallStatus>
    </ToolGateProvider>
  );
});

/**
 * The one call as the `ToolGate` `<ToolCallStatus>` reads (`get`, `requestOf`, `subscribeCall`
 * and the three controls). It is read again on each render of its part, which is when useChat's
 * messages change; approving and denying answer through the chat.
 */
function chatGate(
  id: string,
  current: { readonly current: { readonly shown: Shown; readonly chat: ChatHandle } },
): ToolGate {
  const answer = (approved: boolean, reason?: string): boolean => {
    const { shown, chat } = current.current;
    if (shown.approvalId === undefined || shown.record?.status !== 'awaiting_approval') return false;
    void chat.addToolApprovalResponse(
      reason === undefined ? { id: shown.approvalId, approved } : { id: shown.approvalId, approved, reason },
    );
    return true;
  };
  const reads = {
    get: (asked: string) => (asked === id ? current.current.shown.record : undefined),
    requestOf: (asked: string) => (asked === id ? current.current.shown.request : undefined),
    subscribeCall: () => () => undefined,
    approve: () => answer(true),
    deny: (_id: string, reason?: string) => answer(false, reason),
    // A chat has no way to stop a running call; the ledger's own cancel does (`toolgateHandler`).
    cancel: () => false,
  };
  // `<ToolCallStatus>` reads only the members above; the rest of a gate (proposing, streaming) is the server's.
  return reads as unknown as ToolGate;
}
