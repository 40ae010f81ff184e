import { anthropicToolResult, type AnthropicToolResult } from './providers/anthropic.ts';
import { aiSdkToolResult, type AiSdkToolResult } from './providers/ai-sdk.ts';
import { geminiToolResult, type GeminiToolResult } from './providers/gemini.ts';
import { mcpToolResult, type McpToolResult } from './providers/mcp.ts';
import { openaiChatToolResult, type OpenAIChatToolResult } from './providers/openai-chat.ts';
import { openaiResponsesToolResult, type OpenAIResponsesToolResult } from './providers/openai-responses.ts';
import type { SettledCall } from './record.ts';

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
 * The answer to one settled call in a provider's format.
 *
 * @example
 * messages.push(toolResult(await gate.settled(id), 'openai-chat'));
 */
export function toolResult<F extends ToolResultFormat>(call: SettledCall, format: F): ToolResultFormats[F] {
  const writer = WRITERS[format] as ((call: SettledCall) => ToolResultFormats[F]) | undefined;
  if (writer === undefined) {
    throw new Error(`toolResult: unknown format "${String(format)}"; use one of ${Object.keys(WRITERS).join(', ')}.`);
  }
  return writer(call);
}
