import { outcomeText } from '../outcome.ts';
import type { SettledCall } from '../record.ts';

/**
 * A Chat Completions `tool` message. The API has no error flag, so a failure is said in `content`.
 *
 * @example
 * const message: OpenAIChatToolResult = { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' };
 */
export interface OpenAIChatToolResult {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/**
 * Answers one settled call as a Chat Completions `tool` message.
 *
 * @example
 * messages.push(openaiChatToolResult(call));
 */
export function openaiChatToolResult(call: SettledCall): OpenAIChatToolResult {
  return { role: 'tool', tool_call_id: call.id, content: outcomeText(call) };
}
