import type { Clock } from './clock.ts';
import type { Limits } from '../proposal/limits.ts';
import type { CallEvent } from './machine.ts';
import type { MaybePromise } from './maybe-promise.ts';
import type { ActiveCall, Evidence, ToolCallRecord } from '../record/record.ts';
import type { ToolContext } from '../tool/tool.ts';
import type { ToolEntry } from '../tool/tool-entry.ts';

/**
 * Who or what made a move, for the keeper's audit trail (the server ledger names an actor on
 * every event; the browser gate has one person and ignores it).
 *
 * @example
 * const note: MoveNote = { actor: 'user_42' };
 */
export interface MoveNote {
  readonly actor: string;
}

/**
 * An executing call, as the pipeline hands it to a keeper.
 *
 * @example
 * const running: ExecutingCall = { ...call, status: 'executing' };
 */
export type ExecutingCall = ActiveCall<unknown> & { readonly status: 'executing' };

/**
 * Whether a call is executing, so that the pipeline may run it.
 *
 * @example
 * if (isExecuting(started)) pipeline.run(started, { actor: principal });
 */
export function isExecuting(call: ToolCallRecord): call is ExecutingCall {
  return call.status === 'executing';
}

/**
 * What a keeper gives one execution: extra context for the tool, and how its verified output is
 * written. The browser keeper writes the app's store; the server keeper writes the ledger, inside
 * the tool's own transaction when it has one.
 *
 * @example
 * const scope: ExecutionScope = { context: {}, commit: (call, output) => keeper.move(call.id, { type: 'commit', output }, note) };
 */
export interface ExecutionScope {
  /** Merged into the tool's context (`idempotencyKey`, `transaction`). */
  readonly context?: Partial<ToolContext>;
  /**
   * Writes the verified output and makes the `committed` move (or a `failed` one when the write
   * is refused). Answers the record after the move, or `undefined` when the call had moved on.
   * `evidence` says whose word it is committed on when it is not the run's own answer (`reconcile`).
   */
  readonly commit: (
    call: ExecutingCall,
    output: unknown,
    note: MoveNote,
    evidence?: Omit<Evidence, 'at'>,
  ) => MaybePromise<ToolCallRecord | undefined>;
  /** The execution ended without a commit: give back what `open` took (a lease, a transaction). */
  readonly abandon?: () => MaybePromise<void>;
}

/**
 * Where the pipeline keeps records: in memory (the browser gate) or in a ledger (the server
 * gate). The keeper is the only writer of records; the pipeline only asks it for moves.
 *
 * @example
 * const keeper: CallKeeper = { move: (id, event) => memory.apply(id, event), open: () => ({ commit }) };
 */
export interface CallKeeper {
  /**
   * Makes one move through the pure transition function and keeps the result. Answers the next
   * record, or `undefined` when the move is not allowed (the call moved on meanwhile).
   */
  readonly move: (id: string, event: CallEvent, note: MoveNote) => MaybePromise<ToolCallRecord | undefined>;
  /**
   * For a call that will run without anyone asked (no `authorize`, no `needsApproval`): `validate`,
   * then `execute` at once where nothing can read the call between the two moves, answering the
   * `executing` record; otherwise `validate` alone, answering the `validated` record, and the
   * pipeline goes on step by step. A keeper without it makes every move on its own.
   */
  readonly validateAndExecute?: (
    id: string,
    event: Extract<CallEvent, { type: 'validate' }>,
    note: MoveNote,
  ) => MaybePromise<ToolCallRecord | undefined>;
  /**
   * Prepares the execution of a call that has just moved to `executing`; `undefined` when the call
   * has moved on since (a listener cancelled it as it started), so the tool never starts.
   */
  readonly open: (
    call: ExecutingCall,
    entry: ToolEntry,
    note: MoveNote,
  ) => MaybePromise<ExecutionScope | undefined>;
}

/**
 * What the pipeline needs from the gate that runs it.
 *
 * @example
 * const pipeline = createPipeline({ limits, clock, onError, entry: (name) => entries.get(name), toolNames, keeper, state: () => store?.getState() });
 */
export interface PipelineHost {
  readonly limits: Limits;
  readonly clock: Clock;
  readonly onError: (error: unknown) => void;
  /**
   * The tool registered under `name` (own names only), or `undefined`. `id` names the call it is
   * for: a gate whose tools were replaced answers the definition that call was proposed with.
   */
  readonly entry: (name: string, id: string) => ToolEntry | undefined;
  readonly toolNames: () => readonly string[];
  readonly keeper: CallKeeper;
  /** What `authorize` sees as `state`. */
  readonly state: () => unknown;
}
