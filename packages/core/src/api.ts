// The surface both entry points share; each adds its own `createToolGate` and JSON Schema compiler.
export type { AuditEvent, AuditLog } from './gate/audit.ts';
export type { CallAction, CallRequest, RequestError, Resolution } from './gate/call-request.ts';
export type { ConnectionState, RemoteConnection } from './gate/connection.ts';
export { systemClock, type Clock } from './call/clock.ts';
export { createToolGateWith, type ToolGate, type ToolGateOptions } from './gate/gate.ts';
export type { ReadonlyStore, ToolCallsState } from './gate/call-store.ts';
export {
  refusal,
  type ProposeOptions,
  type StreamGate,
  type StreamOpen,
  type StreamRefusal,
} from './gate/stream-gate.ts';
export {
  copyValue,
  DEFAULT_LIMITS,
  resolveLimits,
  type Limits,
  type LimitsOption,
} from './proposal/limits.ts';
export { createToolRegistry, type ToolProblem, type ToolRegistry } from './tool/registry.ts';
export { ALLOWED_TRANSITIONS, createPending, transition, type CallEvent } from './call/machine.ts';
export { heldText, outcomeText, outputText } from './reply/outcome.ts';
export { isNotExecuted, notExecuted, NotExecutedError } from './tool/not-executed.ts';
export {
  doubtful,
  idempotencyKeyOf,
  RECONCILE_TIMEOUT_MS,
  readReconciliation,
  type ReconcileContext,
  type Reconciliation,
} from './tool/reconcile.ts';
export { readProposal, type Proposal, type ProposalReading } from './proposal/proposal.ts';
export {
  isTerminal,
  type ActiveCall,
  type ApprovalState,
  type InputChange,
  type InputEdit,
  type CancelledCall,
  type CancelledCode,
  type CommittedCall,
  type CompensationLink,
  type Doubt,
  type Evidence,
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
} from './call/record.ts';
export { ALL_REPAIRS, type RepairKind } from './proposal/repair.ts';
export {
  compileSchema,
  isStandardSchema,
  type JsonSchemaCompiler,
  type JsonSchemaCompilerOptions,
  type Validate,
  type ValidationResult,
} from './schema/schema.ts';
export { jsonSchemaAs2020, jsonSchemaDialect, type JsonSchemaDialect } from './schema/dialect.ts';
export { AJV_OPTIONS, ajvIssues, type AjvError } from './schema/ajv-issues.ts';
export { precompiledJsonSchema, type PrecompiledValidator } from './schema/precompiled.ts';
export {
  cancel,
  defineTool,
  isCallOf,
  isCancel,
  type ApproversCall,
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
} from './tool/tool.ts';
export { toolResult, type ToolResultFormat, type ToolResultFormats } from './reply/tool-result.ts';
export {
  createContinuationGuard,
  type ContinuationDecision,
  type ContinuationGuard,
  type ContinuationGuardOptions,
  type ContinuationStopCode,
} from './reply/continuation.ts';
export { toolJsonSchema } from './schema/json-schema-export.ts';
export { openaiStrictSchema, type OpenAIStrictSchema } from './schema/openai-strict.ts';
export { PARALLEL_WRAPPER, readParallelWrapper, type WrappedCall } from './proposal/parallel-wrapper.ts';
export { createPartialJson, type PartialJson, type PartialJsonState } from './stream/partial-json.ts';
export { type StreamReaderOptions, type TurnReader } from './stream/stream.ts';
export {
  answerText,
  type ReplyOptions,
  type ReplySource,
  type SettledTurn,
  type TurnAnswer,
} from './reply/turn.ts';
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
export {
  MCP_TOOL_NAME,
  mcpToolList,
  mcpToolResult,
  type McpToolListEntry,
  type McpToolResult,
} from './providers/mcp.ts';
export {
  McpToolError,
  mcpTools,
  type McpCallResult,
  type McpClientLike,
  type McpToolInfo,
  type McpToolPolicy,
  type McpToolsOptions,
} from './providers/mcp-client.ts';
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
export { canonicalJson, inputHash } from './call/input-hash.ts';
export {
  after,
  createPipeline,
  messageOf,
  truncatedReason,
  type CallKeeper,
  type DoubtCause,
  type ExecutingCall,
  type ExecutionScope,
  type MaybePromise,
  type MoveNote,
  type Pipeline,
  type PipelineHost,
  type ToolEntry,
} from './call/pipeline.ts';
