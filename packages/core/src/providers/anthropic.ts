import { outcomeText } from '../outcome.ts';
import type { SettledCall } from '../record.ts';

/**
 * An Anthropic `tool_result` content block; `is_error` is set for every call that did not commit.
 *
 * @example
 * const block: AnthropicToolResult = { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Done.' };
 */
export interface AnthropicToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/**
 * Answers one settled call as an Anthropic `tool_result` block.
 *
 * @example
 * const reply = { role: 'user', content: calls.map(anthropicToolResult) };
 */
export function anthropicToolResult(call: SettledCall): AnthropicToolResult {
  const block: AnthropicToolResult = { type: 'tool_result', tool_use_id: call.id, content: outcomeText(call) };
  if (call.status !== 'committed') block.is_error = true;
  return block;
}
