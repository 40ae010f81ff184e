// The parts toolgate's own packages (the server gate, the AI SDK and Agents SDK bindings, the MCP
// gateway, the React bindings) build on: the pipeline and the pure machine under it, the record's
// constructors, the proposal reader, limits, the tool registry and the texts shared with the model.
// No semver promise: anything here may change in any release, with the packages that use it. An app
// imports from `@toolgate/core` and the provider subpaths instead.

// The pipeline both gates run, and what it asks of the keeper that writes records.
export {
  createPipeline,
  isExecuting,
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
export { ALLOWED_TRANSITIONS, createPending, transition, type CallEvent } from './call/machine.ts';
export { systemClock } from './call/clock.ts';
export { canonicalJson } from './record/input-hash.ts';

// Reading a raw call under the gate's limits, and a tool's own answer to "did it take effect?".
export { readProposal, type Proposal, type ProposalReading } from './proposal/proposal.ts';
export { DEFAULT_LIMITS, resolveLimits } from './proposal/limits.ts';
export { copyValue } from './proposal/value-walk.ts';
export { refusal } from './gate/stream-gate.ts';
export { idempotencyKeyOf } from './tool/reconcile.ts';

// Tools as a gate holds them, and their JSON Schema as sent to a model.
export { createToolRegistry, type ToolProblem, type ToolRegistry } from './tool/registry.ts';
export { shownInputHash } from './tool/shown-input-hash.ts';
export { toolJsonSchema } from './tool/json-schema-export.ts';
export { ajvJsonSchema } from './schema/ajv.ts';

// Partial JSON as a stream's arguments arrive, read as far as they go.
export { createPartialJson, type PartialJson, type PartialJsonState } from './stream/partial-json.ts';

// The texts a settled call is told to the model with.
export { outcomeText, outputText } from './reply/outcome.ts';
