import type { StoreApi } from 'zustand/vanilla';
import { systemClock, type Clock } from '../call/clock.ts';
import { transition, validateAndExecute, type CallEvent } from '../call/machine.ts';
import {
  createPipeline,
  type CallKeeper,
  type ExecutingCall,
  type ExecutionScope,
} from '../call/pipeline.ts';
import { snapshot } from '../call/snapshot.ts';
import { check } from '../call/steps/verdict.ts';
import { isTerminal, type SettledCall, type ToolCallRecord } from '../record/record.ts';
import { textOf } from '../record/text.ts';
import { resolveLimits, type Limits, type LimitsOption } from '../proposal/limits.ts';
import { toolResult, type ToolResultFormat, type ToolResultFormats } from '../reply/tool-result.ts';
import type { JsonSchemaCompiler } from '../schema/schema.ts';
import { preferBuildTime } from '../schema/build-time.ts';
import type { ToolProblem } from '../tool/registry.ts';
import { idempotencyKeyOf } from '../tool/reconcile.ts';
import type { ToolDefinition } from '../tool/tool.ts';
import { createAuditLog, type AuditLog, type AuditWriter } from './audit.ts';
import { createCallBook, type CallBook } from './call-book.ts';
import type { CallRequest, Resolution } from './call-request.ts';
import type { ReadonlyStore, ToolCallsState } from './call-store.ts';
import type { RemoteConnection } from './connection.ts';
import { BROWSER, createIntake } from './intake.ts';
import { createGateTools } from './gate-tools.ts';
import { createDelivery } from './listeners.ts';
import { createOpenCalls } from './open-calls.ts';
import { createStoreCommit } from './store-commit.ts';
import { stoppedCall } from './stopped.ts';
import type { ProposeOptions, StreamGate } from './stream-gate.ts';

export type { ReadonlyStore, ToolCallsState } from './call-store.ts';

/**
 * What {@link createToolGate} takes.
 *
 * @example
 * const options: ToolGateOptions<Shop> = { tools: [charge], store: shopStore, retain: { settled: 500 } };
 */
export interface ToolGateOptions<S> {
  /** The tools the model may call. Names must be unique. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly tools: readonly ToolDefinition<any, any, NoInfer<S>>[];
  /** The app's Zustand store; written only by a tool's `commit`, only on the way into `committed`. */
  readonly store?: StoreApi<S>;
  readonly limits?: LimitsOption;
  /**
   * Compiles every JSON Schema (default: the validator generated at build time by `@toolgate/core/vite`
   * where there is one, else the entry's own: @cfworker/json-schema, or Ajv from `@toolgate/core/ajv`).
   */
  readonly jsonSchema?: JsonSchemaCompiler;
  readonly clock?: Clock;
  /**
   * Keep at most this many settled calls in `calls`; older ones are dropped (their audit events
   * stay, and their ids are remembered so they are never run again).
   */
  readonly retain?: { readonly settled: number };
  /** Keep at most this many audit events (default: all). */
  readonly audit?: { readonly limit?: number };
  /** Makes ids for calls that arrive without one (default: `tg_1`, `tg_2`, …). */
  readonly generateId?: () => string;
  /** Receives errors thrown by listeners, so that they never break a call (default: `console.error`). */
  readonly onError?: (error: unknown) => void;
}

/**
 * The gate: every tool call goes through it, from proposal to a verified commit or a reason.
 *
 * @example
 * const gate: ToolGate = createToolGate({ tools: [charge], store });
 * const call = await gate.run(toolCall);
 */
export interface ToolGate extends StreamGate {
  /** `propose`, then `settled`. */
  readonly run: (input: unknown, options?: ProposeOptions) => Promise<SettledCall>;
  /**
   * Runs a call that awaits approval. `false`, and nothing moves, when there is no such call. With
   * `edit`, the person approves an edited input: a remote gate sends it to the server gate, which
   * checks it as a proposal; a gate that decides on the spot takes no edits and answers `false`.
   */
  readonly approve: (id: string, edit?: { readonly input: unknown }) => boolean;
  /** Cancels a call that awaits approval with `approval_denied`; the reason is recorded as text, whatever it is. */
  readonly deny: (id: string, reason?: string) => boolean;
  /**
   * Settles a call held in doubt (`executing` with `doubt`) on the word of a person who checked the
   * system it called: `committed` with the output they found (checked against the tool's
   * `outputSchema`; a refused one leaves the call held), or `not_executed`: it runs again once,
   * with the same idempotency key. `false`, and nothing moves, when the call is not held. A remote
   * gate sends it to the server gate (`requestOf` tells how it went).
   */
  readonly resolve?: (id: string, resolution: Resolution) => boolean;
  /**
   * Asks the server gate to undo a committed call through its tool's `compensate`, run as a call of
   * its own (`${id}:compensate`) that the record's `compensation` links to. Only a gate that
   * mirrors a server gate has it: `false` when the call is not committed or was compensated already.
   */
  readonly compensate?: (id: string, reason?: string) => boolean;
  /** The call records, as a read-only Zustand store. */
  readonly calls: ReadonlyStore<ToolCallsState>;
  /**
   * Calls `listener` after each update that moves the call with this id (it need not exist yet).
   * Costs nothing per update for other calls, so a transcript of many calls can follow each one.
   * Returns the unsubscribe function.
   */
  readonly subscribeCall: (id: string, listener: () => void) => () => void;
  /**
   * The request about this call that is on its way or was refused, for a gate that sends
   * approvals to someone else to decide (a remote gate); changes are told through `subscribeCall`.
   * A gate that decides on the spot has no such requests and leaves this out.
   */
  readonly requestOf?: (id: string) => CallRequest | undefined;
  /**
   * The connection to the server that decides, for a gate that mirrors one (a remote gate): its
   * state and when the server was last heard from. A gate that decides on the spot is always
   * there and leaves this out.
   */
  readonly connection?: ReadonlyStore<RemoteConnection>;
  /** What to send back to the model for one settled call, in a provider's format. */
  readonly toolResult: <F extends ToolResultFormat>(id: string, format: F) => ToolResultFormats[F];
  readonly audit: AuditLog;
  /**
   * Compiles every tool's schemas now (otherwise each tool's are compiled on its first call) and
   * lists each tool that cannot be used because a schema of it does not compile; empty when all
   * compile. It never throws: call it at start-up or in a test, and fail there if it lists anything.
   * A call of such a tool is rejected with `tool_unavailable` whether or not `check` was called.
   */
  readonly check: () => readonly ToolProblem[];
  /**
   * Replaces the tools: later proposals see the new set, and `tools` lists it. A call proposed
   * before (streamed calls already opened included) keeps the definition it was proposed with,
   * for its approval, its run and its commit. Throws, and changes nothing, when the set is not
   * a list of tools, two share a name, or one has a `commit` and the gate has no store.
   *
   * @example
   * // A tool that depends on a prop: the gate stays, its definition follows the prop.
   * gate.replaceTools([searchTool(currentFolder)]);
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly replaceTools: (tools: readonly ToolDefinition<any, any, any>[]) => void;
}

/**
 * Builds `createToolGate` around a default JSON Schema compiler, so that each entry point
 * (`@toolgate/core`, `@toolgate/core/csp`) bundles only its own validator.
 *
 * @example
 * export const createToolGate = createToolGateWith(ajvJsonSchema);
 */
export function createToolGateWith(defaultCompiler: JsonSchemaCompiler) {
  // A compiler the app names is used for every schema; the default defers to a validator the Vite
  // plugin generated at build time.
  const byDefault = preferBuildTime(defaultCompiler);
  return function createToolGate<S = unknown>(options: ToolGateOptions<S>): ToolGate {
    return buildGate(options, options.jsonSchema ?? byDefault);
  };
}

function buildGate<S>(options: ToolGateOptions<S>, compileJson: JsonSchemaCompiler): ToolGate {
  const limits: Limits = resolveLimits(options.limits);
  const clock = options.clock ?? systemClock;
  const store = options.store;
  const onError = guardedReport(options.onError ?? ((error: unknown) => console.error(error)));
  // One order for every listener of this gate, so that each hears events in the order they happened.
  const delivery = createDelivery();
  const audit: AuditWriter = createAuditLog(options.audit?.limit ?? Infinity, onError, delivery);
  let idCounter = 0;
  const generateId = options.generateId ?? (() => `tg_${++idCounter}`);

  const tools = createGateTools(options.tools, compileJson, store !== undefined);
  const open = createOpenCalls();
  const onSettled = (call: SettledCall): void => {
    open.settle(call);
    tools.release(call.id);
  };
  const book = createCallBook({
    retain: options.retain?.settled ?? Infinity,
    audit,
    delivery,
    onError,
    onSettled,
  });
  const move = (id: string, event: CallEvent): ToolCallRecord | undefined => {
    const current = book.get(id);
    if (current === undefined) return undefined;
    const next = transition(current, event, clock.now());
    if (next === undefined) return undefined;
    book.write(next, current, event.type === 'validate' ? next.repairs : undefined);
    return next;
  };
  const storeCommit = createStoreCommit({ store, move, status: (id) => book.get(id)?.status, onError });
  const keeper: CallKeeper = {
    move,
    validateAndExecute: movesAsOne(book, audit, clock, move),
    open: (call, entry) => {
      if (book.get(call.id)?.status !== 'executing') return undefined;
      const commit: ExecutionScope['commit'] = (running, output, _note, evidence) =>
        storeCommit.commit(running.id, entry.tool, running.input, output, evidence);
      if (entry.tool.idempotencyKey === undefined) return { commit };
      return { context: { idempotencyKey: idempotencyKeyOf(entry.tool, call.input, call) }, commit };
    },
  };
  const pipeline = createPipeline({
    limits,
    clock,
    onError,
    entry: tools.entry,
    toolNames: tools.names,
    keeper,
    state: () => store?.getState(),
  });

  function cancelCall(id: string, message: string): boolean {
    const call = book.get(id);
    if (call === undefined || isTerminal(call.status) || storeCommit.committing(id)) return false;
    void pipeline.stop(id, new DOMException(message, 'AbortError'));
    return move(id, { type: 'cancel', reason: { code: 'user_cancelled', message } }) !== undefined;
  }
  /** A person's word on a call held in doubt: commit what they found (if its schema takes it), or run it again. */
  function resolveHeld(id: string, resolution: Resolution): boolean {
    const call = book.get(id);
    const entry = call === undefined ? undefined : tools.entry(call.name, id);
    if (call?.status !== 'executing' || call.doubt === undefined || entry === undefined) return false;
    const note =
      typeof resolution.note === 'string' && resolution.note !== '' ? { note: resolution.note } : {};
    if (resolution.outcome === 'not_executed') {
      const next = move(id, { type: 'rerun' });
      if (next?.status === 'executing') pipeline.run(next as ExecutingCall, BROWSER);
      return next !== undefined;
    }
    if (resolution.outcome !== 'committed') return false;
    const commit = (output: unknown) =>
      storeCommit.commit(id, entry.tool, call.input, output, { source: 'person', ...note });
    if (entry.validateOutput === undefined) return commit(resolution.output) !== undefined;
    // A validator that answers at once says here whether it was taken; an async one, once it answers.
    let taken: boolean | undefined;
    check(entry.validateOutput, resolution.output, (verdict) => {
      taken =
        verdict.ok && book.get(id)?.doubt !== undefined && commit(snapshot(verdict.value)) !== undefined;
    });
    return taken ?? true;
  }
  const watch = (id: string, signal: AbortSignal): void =>
    open.watch(id, signal, () => cancelCall(id, 'The caller aborted this call.'));
  const intake = createIntake({ book, limits, clock, generateId, pipeline, move, watch });

  function settled(id: string): Promise<SettledCall> {
    const call = book.lookup(id);
    if (call === undefined)
      return Promise.reject(new Error(`gate.settled: no call with id "${id}" was proposed to this gate.`));
    if (isTerminal(call.status)) return Promise.resolve(call as SettledCall);
    return open.wait(id);
  }

  return {
    propose: intake.propose,
    settled,
    stopped: (id) => stoppedCall({ get: book.lookup, subscribeCall: book.subscribeCall, settled }, id),
    run: (input, proposeOptions) => settled(intake.propose(input, proposeOptions).id),
    get: book.lookup,
    approve: (id, edit) =>
      book.batch(() => {
        // An edit is checked and run by a server gate; approving the original instead would run what the person changed.
        if (edit !== undefined) return false;
        const call = book.get(id);
        if (call?.status !== 'awaiting_approval' || tools.entry(call.name, id) === undefined) return false;
        pipeline.execute(id, BROWSER);
        return true;
      }),
    deny: (id, reason) =>
      book.batch(() => {
        if (book.get(id)?.status !== 'awaiting_approval') return false;
        const message = reason === undefined ? 'a person denied this call' : textOf(reason);
        return move(id, { type: 'cancel', reason: { code: 'approval_denied', message } }) !== undefined;
      }),
    cancel: (id, reason) =>
      book.batch(() =>
        cancelCall(id, reason === undefined ? 'the user cancelled this call' : textOf(reason)),
      ),
    resolve: (id, resolution) => book.batch(() => resolveHeld(id, resolution)),
    calls: book.calls,
    subscribeCall: book.subscribeCall,
    toolResult(id, format) {
      const call = book.lookup(id);
      if (call === undefined)
        throw new Error(`gate.toolResult: no call with id "${id}" was proposed to this gate.`);
      if (!isTerminal(call.status)) {
        throw new Error(
          `gate.toolResult: call "${id}" is ${call.status}; answer it once it has settled (await gate.settled(id)).`,
        );
      }
      return toolResult(call as SettledCall, format);
    },
    audit,
    get tools() {
      return tools.list();
    },
    check: tools.check,
    replaceTools: (next) => tools.replace(next, openIds(book.calls.getState().records)),
    limits,
    stream: intake.stream,
  };
}

/**
 * The keeper's `validate` then `execute` as one move. The `validated` record is read by no one when
 * no app code runs before the next move: no audit listener is told of it, subscribers hear of the
 * batch only when it ends, and the time is the system's. Elsewhere each move is made, and kept, on
 * its own.
 */
function movesAsOne(
  book: CallBook,
  audit: AuditWriter,
  clock: Clock,
  move: (id: string, event: CallEvent) => ToolCallRecord | undefined,
): NonNullable<CallKeeper['validateAndExecute']> {
  return (id, event) => {
    if (!book.batching() || audit.listening() || clock !== systemClock) return move(id, event);
    const current = book.get(id);
    if (current === undefined) return undefined;
    const validatedAt = clock.now();
    const next = validateAndExecute(current, event, validatedAt, clock.now());
    if (next === undefined) return undefined;
    // The step it passed through is the one before its last.
    book.write(next, current, next.repairs, next.history[next.history.length - 2]);
    return next;
  };
}

/** The calls that have not ended: each keeps the tools it was proposed with when they are replaced. */
function* openIds(records: ReadonlyMap<string, ToolCallRecord>): Iterable<string> {
  for (const [id, call] of records) if (!isTerminal(call.status)) yield id;
}

/** The app's error handler, kept from breaking a call when it throws itself. */
function guardedReport(report: (error: unknown) => void): (error: unknown) => void {
  return (error) => {
    try {
      report(error);
    } catch {
      // The app's own error handler threw: there is nowhere left to report to, and the call goes on.
    }
  };
}
