import { isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { latestData } from './chat-calls.ts';

/**
 * useChat's `sendAutomaticallyWhen` for a chat over toolgate: what the AI SDK's
 * `lastAssistantMessageIsCompleteWithApprovalResponses` says, and also a new answer to a call
 * whose last answer the ledger refused. That part was asked again in the message the refusal
 * answered, so it sits before the step the SDK's own check reads, and would otherwise wait for
 * the person's next message.
 *
 * @example
 * const { messages, addToolApprovalResponse } = useChat<ChatMessage>({
 *   transport: new DefaultChatTransport({ api: '/api/chat' }),
 *   sendAutomaticallyWhen: toolgateSendAutomaticallyWhen,
 * });
 */
export function toolgateSendAutomaticallyWhen({ messages }: { messages: UIMessage[] }): boolean {
  if (lastAssistantMessageIsCompleteWithApprovalResponses({ messages })) return true;
  const last = messages.at(-1);
  if (last?.role !== 'assistant') return false;
  const tools = last.parts.filter(isToolUIPart);
  // Like the SDK's check: nothing goes while the person still has a call to answer.
  if (tools.some((part) => part.state === 'approval-requested')) return false;
  return tools.some((part) => {
    if (part.state !== 'approval-responded') return false;
    const refused = latestData(messages, part.toolCallId)?.refusal?.approvalId;
    return refused !== undefined && refused !== part.approval.id;
  });
}
