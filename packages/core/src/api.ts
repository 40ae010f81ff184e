// The surface both entry points share; each adds its own `createToolGate` and JSON Schema compiler.
export type { AuditEvent, AuditLog } from './audit.ts';
export {
  createToolGateWith,
  type Clock,
  type ProposeOptions,
  type ReadonlyStore,
  type StreamOpen,
  type ToolCallsState,
  type ToolGate,
  type ToolGateOptions,
} from './gate.ts';
export { DEFAULT_LIMITS, type Limits } from './limits.ts';
export { ALLOWED_TRANSITIONS, createPending, transition, targetOf, type CallEvent } from './machine.ts';
export { outcomeText, outputText } from './outcome.ts';
export { readProposal, type Proposal, type ProposalReading } from './proposal.ts';
export {
  isTerminal,
  type ActiveCall,
  type CancelledCall,
  type CancelledCode,
  type CommittedCall,
  type FailedCall,
  type FailedCode,
  type Issue,
  type PendingCall,
  type ProposalSource,
  type Reason,
  type ReasonCode,
  type RejectedCall,
  type RejectedCode,
  type Repair,
  type SettledCall,
  type TerminalStatus,
  type ToolCallRecord,
  type ToolCallStatus,
  type Transition,
} from './record.ts';
export { ALL_REPAIRS, type RepairKind } from './repair.ts';
export { compileSchema, isStandardSchema, type JsonSchemaCompiler, type Validate, type ValidationResult } from './schema.ts';
export {
  cancel,
  defineTool,
  isCancel,
  type AuthorizeContext,
  type Cancel,
  type InferSchema,
  type InputOf,
  type JsonSchemaObject,
  type OutputOf,
  type ToolConfig,
  type ToolContext,
  type ToolDefinition,
  type ToolSchema,
} from './tool.ts';
export { toolResult, type ToolResultFormat, type ToolResultFormats } from './tool-result.ts';
export { aiSdkToolResult, type AiSdkToolResult, type JsonValue } from './providers/ai-sdk.ts';
export { anthropicToolResult, type AnthropicToolResult } from './providers/anthropic.ts';
export { geminiToolResult, type GeminiToolResult } from './providers/gemini.ts';
export { mcpToolResult, type McpToolResult } from './providers/mcp.ts';
export { openaiChatToolResult, type OpenAIChatToolResult } from './providers/openai-chat.ts';
export { openaiResponsesToolResult, type OpenAIResponsesToolResult } from './providers/openai-responses.ts';
