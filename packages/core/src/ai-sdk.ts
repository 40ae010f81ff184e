// The AI SDK's stream parts and messages, read and answered without the AI SDK itself (for a gate
// under `streamText`, `@toolgate/ai-sdk` does all of it).
export {
  aiSdkReply,
  aiSdkToolResult,
  readAiSdkStream,
  type AiSdkAssistantMessage,
  type AiSdkAssistantPart,
  type AiSdkStreamPart,
  type AiSdkStreamReader,
  type AiSdkToolResult,
  type JsonValue,
} from './providers/ai-sdk.ts';
