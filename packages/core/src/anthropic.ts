// Anthropic's Messages API: its tool list, stream reader and reply.
export {
  ANTHROPIC_TOOL_NAME,
  anthropicReply,
  anthropicToolResult,
  anthropicTools,
  readAnthropicStream,
  type AnthropicAssistantMessage,
  type AnthropicContentBlock,
  type AnthropicStreamEvent,
  type AnthropicStreamReader,
  type AnthropicTool,
  type AnthropicToolResult,
} from './providers/anthropic.ts';
