// Google's Gemini API: its function declarations, stream reader and reply.
export {
  GEMINI_TOOL_NAME,
  geminiFunctionDeclarations,
  geminiReply,
  geminiToolResult,
  readGeminiStream,
  type GeminiChunk,
  type GeminiFunctionDeclaration,
  type GeminiModelContent,
  type GeminiPart,
  type GeminiStreamReader,
  type GeminiToolResult,
} from './providers/gemini.ts';
