// The front door both entry points share (`@toolgate/core` and `@toolgate/core/csp`): what a user of
// the browser gate writes. Each entry adds its own `createToolGate` and JSON Schema compiler. The
// providers live under their own subpaths (`@toolgate/core/openai`, `/anthropic`, `/gemini`, `/mcp`,
// `/ai-sdk`); what toolgate's own packages share is in `@toolgate/core/kit`.

// Writing a tool: its definition, its context, a person's veto, and the answer that it never ran.
export {
  cancel,
  defineTool,
  isCallOf,
  isCancel,
  type ApproversCall,
  type Escalation,
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
export { notExecuted } from './tool/not-executed.ts';
export type { ReconcileContext, Reconciliation } from './tool/reconcile.ts';

// The gate and what it is given.
export type { ToolGate, ToolGateOptions } from './gate/gate.ts';
export type { Clock } from './call/clock.ts';
export type { Limits, LimitsOption } from './proposal/limits.ts';
export type { RepairKind } from './proposal/repair.ts';
export type { ReadonlyStore, ToolCallsState } from './gate/call-store.ts';
export type { ProposeOptions, StreamGate, StreamOpen, StreamRefusal } from './gate/stream-gate.ts';
export type { AuditEvent, AuditLog } from './gate/audit.ts';
export type { CallAction, CallRequest, RequestError, Resolution } from './gate/call-request.ts';
export type { ConnectionState, RemoteConnection } from './gate/connection.ts';

// A call's record: its status, whether it has settled, and why it ended as it did.
export {
  isTerminal,
  type ActiveCall,
  type ApprovalState,
  type CancelledCall,
  type CancelledCode,
  type CommittedCall,
  type CompensationLink,
  type Doubt,
  type Evidence,
  type FailedCall,
  type FailedCode,
  type InputChange,
  type InputEdit,
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
} from './record/record.ts';

// What the model is told: a settled call's answer, a held call's, and whether a turn's reply may
// go back without a person.
export { toolResult, type ToolResultFormat, type ToolResultFormats } from './reply/tool-result.ts';
export { heldText } from './reply/outcome.ts';
export {
  createContinuationGuard,
  type ContinuationDecision,
  type ContinuationGuard,
  type ContinuationGuardOptions,
  type ContinuationStopCode,
} from './reply/continuation.ts';
export type { ReplyOptions, ReplySource, SettledTurn, TurnAnswer } from './reply/turn.ts';
export type { StreamReaderOptions, TurnReader } from './stream/stream.ts';

// Approving a server gate's call: the hash of the input the person was shown.
export { inputHash } from './record/input-hash.ts';

// Choosing how JSON Schemas are checked: Ajv with the app's own schemas, or validators generated at
// build time (for a strict Content-Security-Policy).
export type {
  JsonSchemaCompiler,
  JsonSchemaCompilerOptions,
  Validate,
  ValidationResult,
} from './schema/schema.ts';
export { jsonSchemaAs2020, type JsonSchemaDialect } from './schema/dialect.ts';
export { AJV_OPTIONS } from './schema/ajv-issues.ts';
export { precompiledJsonSchema, type PrecompiledValidator } from './schema/precompiled.ts';
