import { outcomeText } from '../outcome.ts';
import type { SettledCall } from '../record.ts';

/**
 * A Responses API `function_call_output` input item, correlated by `call_id`.
 *
 * @example
 * const item: OpenAIResponsesToolResult = { type: 'function_call_output', call_id: 'call_1', output: '{"ok":true}' };
 */
export interface OpenAIResponsesToolResult {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

/**
 * Answers one settled call as a Responses `function_call_output` item.
 *
 * @example
 * input.push(openaiResponsesToolResult(call));
 */
export function openaiResponsesToolResult(call: SettledCall): OpenAIResponsesToolResult {
  return { type: 'function_call_output', call_id: call.id, output: outcomeText(call) };
}
