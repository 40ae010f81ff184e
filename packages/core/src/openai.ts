// OpenAI: Chat Completions and the Responses API, their tool lists, stream readers and replies.
export {
  OPENAI_TOOL_NAME,
  openaiChatReply,
  openaiChatToolResult,
  openaiChatTools,
  readOpenAIChatStream,
  type OpenAIChatAssistantMessage,
  type OpenAIChatChunk,
  type OpenAIChatReplyMessage,
  type OpenAIChatStreamReader,
  type OpenAIChatTool,
  type OpenAIToolsOptions,
} from './providers/openai-chat.ts';
export {
  openaiResponsesReply,
  openaiResponsesToolResult,
  openaiResponsesTools,
  readOpenAIResponsesStream,
  type OpenAIResponsesEvent,
  type OpenAIResponsesFunctionCallItem,
  type OpenAIResponsesOutputItem,
  type OpenAIResponsesReplyItem,
  type OpenAIResponsesStreamReader,
  type OpenAIResponsesTool,
  type OpenAIResponsesToolResult,
} from './providers/openai-responses.ts';
export { openaiStrictSchema, type OpenAIStrictSchema } from './schema/openai-strict.ts';
