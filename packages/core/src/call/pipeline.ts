import { problemReason, readArguments } from '../proposal/arguments.ts';
import type { Clock } from './clock.ts';
import { copyValue, type Limits } from '../proposal/limits.ts';
import type { CallEvent } from './machine.ts';
import { PARALLEL_WRAPPER, parallelWrapperReason } from '../proposal/parallel-wrapper.ts';
import type {
  ActiveCall,
  CancelledCode,
  FailedCode,
  Issue,
  Reason,
  RejectedCode,
  Repair,
  ToolCallRecord,
} from './record.ts';
import { repairValues } from '../proposal/repair.ts';
import { freezeOwn, ownCopy, snapshot } from './snapshot.ts';
import { compileSchema, type JsonSchemaCompiler, type Validate, type ValidationResult } from '../schema/schema.ts';
import { textOf } from './text.ts';
import { isCancel, type ToolContext, type ToolDefinition } from '../tool/tool.ts';

/**
 * A value now, or a promise of it. The pipeline stays synchronous for synchronous steps (a sync
 * tool in the browser commits within `propose`) and waits only where a step is asynchronous.
 *
 * @example
 * const answer: MaybePromise<boolean> = tool.needsApproval(input);
 */
export type MaybePromise<T> = T | PromiseLike<T>;

/**
 * A registered tool with its compiled checks.
 *
 * @example
 * const entry: ToolEntry = { tool: charge, validateInput, validateOutput: undefined };
 */
export interface ToolEntry {
  readonly tool: ToolDefinition;
  readonly validateInput: Validate;
  readonly validateOutput: Validate | undefined;
  /**
   * Why the tool cannot be used (a schema of it does not compile), naming the tool; a call of it
   * is rejected with `tool_unavailable` before anything runs.
   */
  readonly problem?: string;
}

/**
 * Compiles a tool's schemas into its entry. A schema that does not compile does not throw: the
 * entry carries the problem, so that a gate can be built before its schemas are compiled (on a
 * tool's first call) and a broken tool refuses its calls while the others work.
 *
 * @example
 * const entry = compileEntry(charge, ajvJsonSchema);
 * if (entry.problem) console.error(entry.problem);
 */
export function compileEntry(tool: ToolDefinition, compileJson: JsonSchemaCompiler): ToolEntry {
  let part = 'input';
  try {
    const validateInput = compileSchema(tool.inputSchema, compileJson);
    part = 'output';
    const validateOutput = tool.outputSchema === undefined ? undefined : compileSchema(tool.outputSchema, compileJson);
    return { tool, validateInput, validateOutput };
  } catch (error) {
    const problem = `the ${part} schema of tool "${tool.name}" does not compile: ${messageOf(error)}`;
    return { tool, validateInput: () => ({ ok: false, issues: [{ path: '', message: problem }] }), validateOutput: undefined, problem };
  }
}

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
   */
  readonly commit: (call: ExecutingCall, output: unknown, note: MoveNote) => MaybePromise<ToolCallRecord | undefined>;
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
   * Prepares the execution of a call that has just moved to `executing`; `undefined` when the call
   * has moved on since (a listener cancelled it as it started), so the tool never starts.
   */
  readonly open: (call: ExecutingCall, entry: ToolEntry, note: MoveNote) => MaybePromise<ExecutionScope | undefined>;
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
  readonly resolve: (id: string, name: string, raw: unknown, truncated: boolean, repairs: readonly Repair[], note: MoveNote) => void;
  /** A validated call: authorize it, then ask a person or run it. */
  readonly authorize: (call: ToolCallRecord, note: MoveNote) => void;
  /** Moves a validated or approved call to `executing` and runs it. */
  readonly execute: (id: string, note: MoveNote) => void;
  /** Runs a call the keeper has already moved to `executing` (an approval or a recovery claimed it). */
  readonly run: (call: ExecutingCall, note: MoveNote) => void;
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
 * One run of a tool as the pipeline sees it: `opening` while the keeper prepares it, `running`
 * while the tool works, `taken` once its result went to the keeper's commit, `ended` when it will
 * not commit. Its AbortController is made on first use of `signal`: most tools never read it, and
 * making one per call is measurable in a long chat. The tool never sees this object, only a
 * context that reads the signal from it, so it cannot end its own run or hide from a stop.
 */
class Run {
  stage: 'opening' | 'running' | 'taken' | 'ended' = 'opening';
  scope: ExecutionScope | undefined = undefined;
  timer: unknown = undefined;
  #controller: AbortController | undefined = undefined;
  #abortReason: DOMException | undefined = undefined;

  signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#abortReason !== undefined) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  abort(reason: DOMException): void {
    if (this.#abortReason !== undefined) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }
}

/**
 * What a tool receives beside its input. It reads the signal from its run but holds nothing the
 * pipeline acts on: whatever a tool writes to its context changes only its own view of it.
 */
class Context implements ToolContext {
  readonly call: { readonly id: string; readonly name: string };
  readonly idempotencyKey: string;
  readonly transaction: unknown;
  readonly #run: Run;

  constructor(run: Run, id: string, name: string, extra: Partial<ToolContext> | undefined) {
    this.#run = run;
    this.call = { id, name };
    this.idempotencyKey = extra?.idempotencyKey ?? id;
    this.transaction = extra?.transaction;
  }

  get signal(): AbortSignal {
    return this.#run.signal();
  }
}

/**
 * Calls `then` with a value: at once when it is plain, when it settles when it is a thenable (of
 * any realm). Reading or calling `then` may throw (a revoked Proxy, a hostile object); that, a
 * rejection, and a thenable that answers twice all end in exactly one call of `then` or `fail`.
 *
 * @example
 * after(tool.execute(input, ctx), (output) => finish(output), (error) => fail(error));
 */
export function after<T>(value: MaybePromise<T>, then: (value: T) => void, fail: (error: unknown) => void): void {
  let thenMethod: unknown;
  try {
    thenMethod = (typeof value === 'object' || typeof value === 'function') && value !== null ? (value as { then?: unknown }).then : undefined;
  } catch (error) {
    fail(error);
    return;
  }
  if (typeof thenMethod !== 'function') {
    then(value as T);
    return;
  }
  let answered = false;
  try {
    (thenMethod as PromiseLike<T>['then']).call(
      value as PromiseLike<T>,
      (settled) => {
        if (answered) return;
        answered = true;
        // A thenable may resolve with another thenable.
        after(settled, then, fail);
      },
      (error: unknown) => {
        if (answered) return;
        answered = true;
        fail(error);
      },
    );
  } catch (error) {
    if (answered) return;
    answered = true;
    fail(error);
  }
}

/**
 * Calls `fn`, then `then` with its answer (awaited when it is a thenable), or `fail` when it throws
 * or rejects: app code called where a throw must not escape.
 *
 * @example
 * attempt(() => scope.abandon?.(), done, report);
 */
export function attempt<T>(fn: () => MaybePromise<T>, then: (value: T) => void, fail: (error: unknown) => void): void {
  let value: MaybePromise<T>;
  try {
    value = fn();
  } catch (error) {
    fail(error);
    return;
  }
  after(value, then, fail);
}

/**
 * Builds the pipeline over a keeper.
 *
 * @example
 * const pipeline = createPipeline(host);
 */
export function createPipeline(host: PipelineHost): Pipeline {
  const { limits, clock, keeper } = host;

  const move = (id: string, event: CallEvent, note: MoveNote, then?: (next: ToolCallRecord | undefined) => void) =>
    after(keeper.move(id, event, note), (next) => then?.(next), host.onError);
  const reject = (id: string, reason: Reason<RejectedCode>, note: MoveNote) => move(id, { type: 'reject', reason }, note);
  const fail = (id: string, code: FailedCode, message: string, note: MoveNote, issues?: readonly Issue[]) =>
    move(id, { type: 'fail', reason: issues ? { code, message, issues } : { code, message } }, note);
  const cancelled = (id: string, code: CancelledCode, message: string, note: MoveNote) =>
    move(id, { type: 'cancel', reason: { code, message } }, note);

  function resolve(id: string, name: string, raw: unknown, truncated: boolean, earlier: readonly Repair[], note: MoveNote): void {
    const entry = host.entry(name, id);
    if (entry === undefined) {
      const reason: Reason<RejectedCode> =
        name === PARALLEL_WRAPPER
          ? parallelWrapperReason(raw, limits)
          : { code: 'unknown_tool', message: unknownToolMessage(name, host.toolNames()) };
      reject(id, reason, note);
      return;
    }
    if (entry.problem !== undefined) {
      reject(id, { code: 'tool_unavailable', message: entry.problem }, note);
      return;
    }
    if (truncated) {
      reject(id, truncatedReason(), note);
      return;
    }
    const allowed = entry.tool.repair ?? [];
    let args: ReturnType<typeof readArguments>;
    try {
      args = readArguments(raw, limits, allowed);
    } catch (error) {
      args = { ok: false, reason: { code: 'invalid_shape', message: `the arguments could not be read: ${messageOf(error)}` } };
    }
    if (!args.ok) {
      reject(id, args.reason, note);
      return;
    }
    const read = args;
    check(entry.validateInput, read.value, (first) => {
      if (first.ok) return accept(id, [...earlier, ...read.repairs], first.value, first.value === read.value, note);
      const repaired = repairValues(read.value, first.issues, allowed, limits);
      if (repaired === undefined) return rejectInvalid(id, name, first.issues, note);
      // Decoded strings are new structure: the same depth and `__proto__` rules apply to them.
      const checked = copyValue(repaired.value, { maxArgumentChars: Infinity, maxDepth: limits.maxDepth });
      if (checked.kind !== 'ok') return reject(id, problemReason(checked, limits), note);
      check(entry.validateInput, repaired.value, (second) => {
        if (second.ok) accept(id, [...earlier, ...read.repairs, ...repaired.repairs], second.value, second.value === repaired.value, note);
        else rejectInvalid(id, name, first.issues, note);
      });
    });
  }

  /**
   * Runs a check that may be async (a thenable of any realm is awaited). A validator that throws,
   * rejects or answers anything but a well-formed result refuses the value, with issues that say so.
   */
  function check(validate: Validate, value: unknown, then: (result: ValidationResult) => void): void {
    let result: unknown;
    try {
      result = validate(value);
    } catch (error) {
      then(thrownIssue(error));
      return;
    }
    after(result, (answer) => then(verdictOf(answer)), (error) => then(thrownIssue(error)));
  }

  function rejectInvalid(id: string, name: string, issues: readonly Issue[], note: MoveNote): void {
    const list = issues.map((issue) => `${issue.path || '(arguments)'} ${issue.message}`).join('; ');
    reject(id, { code: 'invalid_arguments', message: `the arguments of "${name}" do not match its schema: ${list}`, issues }, note);
  }

  /**
   * Records the validated value frozen, once: what a person approves and the tool runs is what was
   * validated, whatever app code does to the record meanwhile. A value the gate made (arguments it
   * parsed or copied, which no one else holds) is frozen in place; a validator's own answer is
   * copied first. The tool gets a copy of its own, kept aside until it runs.
   */
  function accept(id: string, repairs: readonly Repair[], value: unknown, owned: boolean, note: MoveNote): void {
    let input: unknown;
    try {
      // The tool's copy first, from the value as the validator answered it; then the record's.
      const mine = ownCopy(value);
      input = owned ? freezeOwn(value) : snapshot(value);
      if (typeof input === 'object' && input !== null) forTool.set(input, mine);
    } catch (error) {
      reject(id, { code: 'invalid_arguments', message: `the value the validator answered could not be read: ${messageOf(error)}` }, note);
      return;
    }
    const event: CallEvent = repairs.length === 0 ? { type: 'validate', input } : { type: 'validate', input, repairs };
    move(id, event, note, (validated) => {
      if (validated !== undefined) authorize(validated, note);
    });
  }

  function authorize(call: ToolCallRecord, note: MoveNote): void {
    if (call.status !== 'validated') return;
    const entry = host.entry(call.name, call.id);
    if (entry === undefined) return;
    const { tool } = entry;
    const { id, input } = call;
    if (tool.authorize === undefined) {
      ask(id, entry, input, note);
      return;
    }
    const refuse = (error: unknown) => reject(id, { code: 'unauthorized', message: `authorize threw: ${messageOf(error)}` }, note);
    let verdict: unknown;
    try {
      verdict = tool.authorize(input, { call: { id, name: tool.name }, state: host.state() });
    } catch (error) {
      refuse(error);
      return;
    }
    after(
      verdict,
      (answer) => {
        if (answer === true) ask(id, entry, input, note);
        else reject(id, { code: 'unauthorized', message: typeof answer === 'string' && answer !== '' ? answer : 'the app did not authorize this call' }, note);
      },
      refuse,
    );
  }

  /** Asks a person, or runs the call. Only a definite `false` (or no `needsApproval`) skips the person. */
  function ask(id: string, entry: ToolEntry, input: unknown, note: MoveNote): void {
    const { needsApproval } = entry.tool;
    const refuse = (error: unknown) => reject(id, { code: 'unauthorized', message: `needsApproval threw: ${messageOf(error)}` }, note);
    let answer: unknown;
    try {
      answer = typeof needsApproval === 'function' ? needsApproval(input) : (needsApproval ?? false);
    } catch (error) {
      refuse(error);
      return;
    }
    after(
      answer,
      (value) => {
        if (value === true) move(id, { type: 'await_approval' }, note);
        else if (value === false) execute(id, note);
        else reject(id, { code: 'unauthorized', message: `needsApproval answered ${describeAnswer(value)}; it must answer true or false` }, note);
      },
      refuse,
    );
  }

  function execute(id: string, note: MoveNote): void {
    move(id, { type: 'execute' }, note, (call) => {
      if (call?.status === 'executing') run(call as ExecutingCall, note);
    });
  }

  function run(call: ExecutingCall, note: MoveNote): void {
    const { id } = call;
    const entry = host.entry(call.name, id);
    if (entry === undefined) {
      fail(id, 'tool_error', `no tool named "${call.name}" is registered on this gate any more`, note);
      return;
    }
    // One run per call in this process, whoever asks.
    if (runs.has(id)) return;
    const job = new Run();
    runs.set(id, job);
    attempt(
      () => keeper.open(call, entry, note),
      (scope) => {
        if (scope === undefined) {
          // The call moved on before it could start (a listener cancelled it as it began).
          forget(id, job);
          return;
        }
        if (job.stage !== 'opening') {
          // Stopped while the keeper was opening it: the tool never starts; give back what was taken.
          attempt(() => scope.abandon?.(), () => undefined, host.onError);
          return;
        }
        start(call, entry, scope, job, note);
      },
      (error) => {
        forget(id, job);
        fail(id, 'tool_error', `the call could not be started: ${messageOf(error)}`, note);
      },
    );
  }

  function forget(id: string, job: Run): void {
    if (runs.get(id) === job) runs.delete(id);
  }

  function start(call: ExecutingCall, entry: ToolEntry, scope: ExecutionScope, job: Run, note: MoveNote): void {
    const { id } = call;
    const { tool } = entry;
    job.stage = 'running';
    job.scope = scope;
    const failed = (message: string) => void end(job, id, () => fail(id, 'tool_error', message, note));
    if (tool.timeoutMs !== undefined) {
      const ms = tool.timeoutMs;
      job.timer = clock.setTimeout(() => {
        if (job.stage !== 'running') return;
        job.abort(new DOMException(`The call timed out after ${ms} ms.`, 'TimeoutError'));
        void end(job, id, () => cancelled(id, 'timeout', `the tool did not finish within ${ms} ms`, note));
      }, ms);
    }
    let result: unknown;
    try {
      result = tool.execute(toolInput(call.input), new Context(job, id, tool.name, scope.context));
    } catch (error) {
      failed(`the tool threw: ${messageOf(error)}`);
      return;
    }
    after(result, receive, (error) => failed(`the tool failed: ${messageOf(error)}`));

    function receive(output: unknown): void {
      // A result that arrives after a cancel or a timeout is dropped here.
      if (job.stage !== 'running') return;
      let cancelReason: string | undefined;
      try {
        cancelReason = isCancel(output) ? textOf(output.reason) : undefined;
      } catch (error) {
        failed(`the tool's result could not be read: ${messageOf(error)}`);
        return;
      }
      if (cancelReason !== undefined) {
        const reason = cancelReason;
        void end(job, id, () => cancelled(id, 'tool_cancelled', reason, note));
        return;
      }
      if (entry.validateOutput === undefined) {
        settle(output);
        return;
      }
      check(entry.validateOutput, output, (verdict) => {
        if (job.stage !== 'running') return;
        if (verdict.ok) settle(verdict.value);
        else {
          const list = verdict.issues.map((issue) => `${issue.path || '(output)'} ${issue.message}`).join('; ');
          void end(job, id, () => fail(id, 'output_invalid', `the tool's output does not match its output schema: ${list}`, note, verdict.issues));
        }
      });
    }

    function settle(result: unknown): void {
      // A frozen copy, made once, is what the record keeps and `commit` sees: a tool that changes its
      // object after returning it changes neither.
      let output: unknown;
      try {
        output = snapshot(result);
      } catch (error) {
        failed(`the tool's output could not be read: ${messageOf(error)}`);
        return;
      }
      // The result is taken: a stop from here on only aborts the signal; the keeper's commit decides.
      job.stage = 'taken';
      if (job.timer !== undefined) clock.clearTimeout(job.timer);
      attempt(
        () => scope.commit(call, output, note),
        () => forget(id, job),
        (error) => {
          forget(id, job);
          const failCommit = () => fail(id, 'commit_error', `the result could not be committed: ${messageOf(error)}`, note);
          attempt(() => scope.abandon?.(), failCommit, (abandonError) => {
            host.onError(abandonError);
            failCommit();
          });
        },
      );
    }
  }

  /**
   * Ends a run that will not commit, once: `then` (the move that says why) runs after the scope has
   * given back what it held. False-y (`undefined`) when the run had already ended or was taken.
   */
  function end(job: Run, id: string, then: () => void): MaybePromise<void> {
    if (job.stage === 'ended' || job.stage === 'taken') return;
    const { scope } = job;
    job.stage = 'ended';
    forget(id, job);
    if (job.timer !== undefined) clock.clearTimeout(job.timer);
    if (scope?.abandon === undefined) return then();
    return new Promise<void>((done) =>
      attempt(
        () => scope.abandon?.(),
        () => done(then()),
        (error) => {
          host.onError(error);
          done(then());
        },
      ),
    );
  }

  const runs = new Map<string, Run>();

  // The tool's own copy of each validated input, by the record's frozen one; taken when it runs.
  const forTool = new WeakMap<object, unknown>();

  /** The input a tool runs with: its own copy, so that it cannot change the record's. */
  function toolInput(input: unknown): unknown {
    if (typeof input !== 'object' || input === null) return input;
    const kept = forTool.get(input);
    if (kept === undefined) return ownCopy(input);
    forTool.delete(input);
    return kept;
  }

  return {
    resolve,
    authorize,
    execute,
    run,
    reject,
    running: (id) => runs.has(id),
    stop(id, reason) {
      const job = runs.get(id);
      if (job === undefined) return;
      job.abort(reason);
      return end(job, id, () => undefined);
    },
  };
}

/**
 * The rejection for a call the provider cut off.
 *
 * @example
 * truncatedReason().code; // 'truncated'
 */
export function truncatedReason(message?: string): Reason<'truncated'> {
  return {
    code: 'truncated',
    message: message ?? 'the provider cut this call off at its output limit before the arguments were complete; nothing was run',
  };
}

function describeAnswer(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : textOf(value);
}

function unknownToolMessage(name: string, names: readonly string[]): string {
  const shown = names.slice(0, 20).map((n) => `"${n}"`).join(', ');
  const more = names.length > 20 ? `, and ${names.length - 20} more` : '';
  return names.length === 0
    ? `no tool named "${name}" is registered (this app has no tools)`
    : `no tool named "${name}" is registered; the tools are ${shown}${more}`;
}

function thrownIssue(error: unknown): ValidationResult {
  return { ok: false, issues: [{ path: '', message: `the validator threw: ${messageOf(error)}` }] };
}

/**
 * A validator's answer, trusted only when it is well formed: `{ ok: true, value }` is a success,
 * `{ ok: false, issues: [...] }` a failure; anything else (a custom JSON Schema compiler's `ok: 'yes'`,
 * `{ ok: true }` without a value, `null`) is a failure that says what the validator answered.
 */
function verdictOf(answer: unknown): ValidationResult {
  try {
    if (typeof answer === 'object' && answer !== null) {
      const { ok } = answer as { ok?: unknown };
      if (ok === true && 'value' in answer) return { ok: true, value: (answer).value };
      const issues: unknown = ok === false ? (answer as { issues?: unknown }).issues : undefined;
      if (Array.isArray(issues) && issues.length > 0) return { ok: false, issues: issues.map(issueOf) };
      if (Array.isArray(issues)) return refusedIssue('the validator refused the value without saying why');
    }
    return refusedIssue('the validator answered neither { ok: true, value } nor { ok: false, issues }');
  } catch (error) {
    return thrownIssue(error);
  }
}

function issueOf(issue: unknown): Issue {
  const { path, message, keyword } = (typeof issue === 'object' && issue !== null ? issue : {}) as Partial<Record<keyof Issue, unknown>>;
  const base = { path: typeof path === 'string' ? path : '', message: typeof message === 'string' ? message : textOf(message) };
  return typeof keyword === 'string' ? { ...base, keyword } : base;
}

function refusedIssue(message: string): ValidationResult {
  return { ok: false, issues: [{ path: '', message }] };
}

/**
 * A readable message for anything thrown.
 *
 * @example
 * messageOf(new Error('boom')); // 'boom'
 */
export function messageOf(error: unknown): string {
  return textOf(error);
}
