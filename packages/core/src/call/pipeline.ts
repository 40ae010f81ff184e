import type { MaybePromise } from './maybe-promise.ts';
import type { ExecutingCall, MoveNote, PipelineHost } from './pipeline-host.ts';
import type { Reason, RejectedCode, Repair, ToolCallRecord } from '../record/record.ts';
import { createAuthorization } from './steps/authorization.ts';
import { createExecution } from './steps/execution.ts';
import { createMoves } from './steps/moves.ts';
import type { DoubtCause } from './steps/reconciliation.ts';
import { createToolInputs } from './steps/tool-inputs.ts';
import { createValidation } from './steps/validation.ts';

export type { MaybePromise } from './maybe-promise.ts';
export {
  isExecuting,
  type CallKeeper,
  type ExecutingCall,
  type ExecutionScope,
  type MoveNote,
  type PipelineHost,
} from './pipeline-host.ts';
export { truncatedReason } from './steps/validation.ts';
export type { DoubtCause } from './steps/reconciliation.ts';
export { messageOf } from '../record/text.ts';
export { compileEntry, type ToolEntry } from '../tool/tool-entry.ts';

/**
 * The steps between a proposal and a settled call — read, validate, authorize, ask, execute,
 * check the output, settle — written once and run by both gates. Each step asks the keeper for
 * one move; a step that is synchronous runs at once, so a browser gate with a sync tool settles
 * within `propose`.
 *
 * @example
 * pipeline.resolve(call.id, call.name, rawArguments, false, [], { actor: 'user_42' });
 */
export interface Pipeline {
  /** A pending call's arguments are in: read and validate them, then go on. */
  readonly resolve: (
    id: string,
    name: string,
    raw: unknown,
    truncated: boolean,
    repairs: readonly Repair[],
    note: MoveNote,
  ) => void;
  /** A validated call: authorize it, then ask a person or run it. */
  readonly authorize: (call: ToolCallRecord, note: MoveNote) => void;
  /** Moves a validated or approved call to `executing` and runs it. */
  readonly execute: (id: string, note: MoveNote) => void;
  /** Runs a call the keeper has already moved to `executing` (an approval or a recovery claimed it). */
  readonly run: (call: ExecutingCall, note: MoveNote) => void;
  /**
   * Settles a call the keeper has claimed whose run nobody saw end (a recovery found its process
   * dead): asks the tool's `reconcile` under the claim, then commits what it found, runs the call
   * again once with the same key, or does what the tool's `onUnknown` says (interrupt, or hold).
   */
  readonly reconcile: (call: ExecutingCall, cause: DoubtCause, note: MoveNote) => void;
  /**
   * Stops the local run of a call, if there is one: aborts its signal and drops its result. Settles
   * once the keeper has given back what the run held (a transaction), so the caller's own move
   * (`cancelled`) comes after it. A run stopped while the keeper opens it never starts its tool; a
   * run whose result is already on its way to the keeper's `commit` only has its signal aborted
   * (the keeper's commit decides).
   */
  readonly stop: (id: string, reason: DOMException) => MaybePromise<void>;
  /** Whether this pipeline holds a run of the call now: opening it, running its tool, or committing its result. */
  readonly running: (id: string) => boolean;
  /** Rejects a call with a reason (a pending call the caller could not read, a truncated stream). */
  readonly reject: (id: string, reason: Reason<RejectedCode>, note: MoveNote) => void;
}

/**
 * Builds the pipeline over a keeper: its steps (validation, authorization, execution) are parts of
 * their own, handed the moves they ask of the keeper and the inputs set aside for tools.
 *
 * @example
 * const pipeline = createPipeline(host);
 */
export function createPipeline(host: PipelineHost): Pipeline {
  const moves = createMoves(host.keeper, host.onError);
  const inputs = createToolInputs();
  const execution = createExecution(host, moves, inputs);
  const execute = (id: string, note: MoveNote): void =>
    moves.move(id, { type: 'execute' }, note, (call) => {
      if (call?.status === 'executing') execution.run(call as ExecutingCall, note);
    });
  const authorize = createAuthorization(host, moves, execute);
  const resolve = createValidation(host, moves, inputs, authorize, execution.run);
  return {
    resolve,
    authorize,
    execute,
    run: execution.run,
    reconcile: execution.reconcile,
    reject: moves.reject,
    running: execution.running,
    stop: execution.stop,
  };
}
