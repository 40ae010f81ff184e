import { anthropicToolResult, type AnthropicToolResult } from '../providers/anthropic.ts';
import { aiSdkToolResult, type AiSdkToolResult } from '../providers/ai-sdk.ts';
import { geminiToolResult, type GeminiToolResult } from '../providers/gemini.ts';
import { mcpToolResult, type McpToolResult } from '../providers/mcp.ts';
import { openaiChatToolResult, type OpenAIChatToolResult } from '../providers/openai-chat.ts';
import { openaiResponsesToolResult, type OpenAIResponsesToolResult } from '../providers/openai-responses.ts';
import { unsendableText } from './outcome.ts';
import type { SettledCall } from '../record/record.ts';
import { textOf } from '../record/text.ts';

/**
 * What each `format` of `gate.toolResult` produces.
 *
 * @example
 * const message: ToolResultFormats['openai-chat'] = gate.toolResult(id, 'openai-chat');
 */
export interface ToolResultFormats {
  'openai-chat': OpenAIChatToolResult;
  'openai-responses': OpenAIResponsesToolResult;
  anthropic: AnthropicToolResult;
  gemini: GeminiToolResult;
  mcp: McpToolResult;
  'ai-sdk': AiSdkToolResult;
}

/**
 * A provider format for answering a call.
 *
 * @example
 * const format: ToolResultFormat = 'anthropic';
 */
export type ToolResultFormat = keyof ToolResultFormats;

const WRITERS: { readonly [F in ToolResultFormat]: (call: SettledCall) => ToolResultFormats[F] } = {
  'openai-chat': openaiChatToolResult,
  'openai-responses': openaiResponsesToolResult,
  anthropic: anthropicToolResult,
  gemini: geminiToolResult,
  mcp: mcpToolResult,
  'ai-sdk': aiSdkToolResult,
};

/**
 * The answer to one settled call in a provider's format. A committed output that JSON cannot carry
 * (a BigInt, a cycle) is answered with a text that says so, so that every settled call gets an
 * answer the app can send. Throws for a format it does not know, naming the ones it does.
 *
 * @example
 * messages.push(toolResult(await gate.settled(id), 'openai-chat'));
 */
export function toolResult<F extends ToolResultFormat>(call: SettledCall, format: F): ToolResultFormats[F] {
  // Own keys only: `constructor` or `__proto__` are unknown formats, not Object's.
  const writer =
    typeof format === 'string' && Object.hasOwn(WRITERS, format)
      ? (WRITERS[format] as (call: SettledCall) => ToolResultFormats[F])
      : undefined;
  if (writer === undefined) {
    const named = typeof format === 'string' ? `"${format}"` : textOf(format);
    throw new Error(`toolResult: unknown format ${named}; use one of ${Object.keys(WRITERS).join(', ')}.`);
  }
  return writer(sendable(call));
}

/** The call as a writer can answer it: an output JSON cannot carry is replaced by words saying so. */
function sendable(call: SettledCall): SettledCall {
  if (call.status !== 'committed' || typeof call.output === 'string') return call;
  try {
    JSON.stringify(call.output);
    return call;
  } catch (error) {
    return { ...call, output: unsendableText(error) };
  }
}
