import { afterWith, attempt, type MaybePromise } from '../maybe-promise.ts';
import type { ExecutingCall, ExecutionScope, MoveNote, PipelineHost } from '../pipeline-host.ts';
import { snapshot } from '../snapshot.ts';
import { messageOf, textOf } from '../../record/text.ts';
import type { Evidence } from '../../record/record.ts';
import { isNotExecuted } from '../../tool/not-executed.ts';
import { doubtful } from '../../tool/reconcile.ts';
import { isCancel } from '../../tool/tool.ts';
import type { ToolEntry } from '../../tool/tool-entry.ts';
import type { Moves } from './moves.ts';
import { askReconcile, type DoubtCause } from './reconciliation.ts';
import { Run, RunContext } from './run.ts';
import { frozenInputHint, type ToolInputs } from './tool-inputs.ts';
import { check } from './verdict.ts';

/**
 * The runs of tools in this process: opening a call the keeper moved to `executing`, running its
 * tool under its timeout and signal, checking the output, and handing it to the keeper's commit;
 * or ending a run that will not commit, after the keeper has given back what it held.
 *
 * @example
 * const execution = createExecution(host, moves, inputs);
 * execution.run(call, note);
 * await execution.stop(call.id, new DOMException('the user cancelled this call', 'AbortError'));
 */
export interface Execution {
  readonly run: (call: ExecutingCall, note: MoveNote) => void;
  /**
   * Settles a call the keeper has claimed whose run nobody saw end (its process died): asks the
   * tool's `reconcile`, then commits, runs it again, or does what `onUnknown` says.
   */
  readonly reconcile: (call: ExecutingCall, cause: DoubtCause, note: MoveNote) => void;
  readonly stop: (id: string, reason: DOMException) => MaybePromise<void>;
  readonly running: (id: string) => boolean;
}

/** What the runs of one pipeline share: its host, the moves and tool inputs, and the run of each call. */
interface Runs {
  readonly host: PipelineHost;
  readonly moves: Moves;
  readonly inputs: ToolInputs;
  /** One run per call in this process. */
  readonly byId: Map<string, Run>;
  /** Runs a call (again, after `reconcile` said its effect never happened). */
  readonly run: (call: ExecutingCall, note: MoveNote) => void;
}

function forget(runs: Runs, id: string, job: Run): void {
  if (runs.byId.get(id) === job) runs.byId.delete(id);
}

/**
 * Creates the runs over a host, the moves it asks of the keeper, and the inputs set aside for tools.
 *
 * @example
 * const execution = createExecution(host, createMoves(host.keeper, host.onError), createToolInputs());
 */
export function createExecution(host: PipelineHost, moves: Moves, inputs: ToolInputs): Execution {
  const runs: Runs = { host, moves, inputs, byId: new Map(), run: (call, note) => run(call, note) };

  function run(call: ExecutingCall, note: MoveNote): void {
    open(runs, call, note, undefined);
  }

  return {
    run,
    reconcile(call, cause, note) {
      open(runs, call, note, cause);
    },
    running: (id) => runs.byId.has(id),
    stop(id, reason) {
      const job = runs.byId.get(id);
      if (job === undefined) return;
      job.abort(reason);
      return end(runs, job, id, () => undefined);
    },
  };
}

/** A run the keeper is opening, and what it is opened for: to start its tool, or (with a cause) to `reconcile`. */
interface Opening {
  readonly runs: Runs;
  readonly call: ExecutingCall;
  readonly note: MoveNote;
  readonly cause: DoubtCause | undefined;
  readonly entry: ToolEntry;
  readonly job: Run;
}

/**
 * Opens a run of a call that has just moved to `executing` (or was claimed by a recovery): one run
 * per call in this process, whoever asks; the run starts its tool (or, with a `cause`, asks
 * `reconcile`) in the scope the keeper opened, unless the call moved on meanwhile or the run was
 * stopped while it opened.
 */
function open(runs: Runs, call: ExecutingCall, note: MoveNote, cause: DoubtCause | undefined): void {
  const { host, moves } = runs;
  const { id } = call;
  const entry = host.entry(call.name, id);
  if (entry === undefined) {
    moves.fail(id, 'tool_error', `no tool named "${call.name}" is registered on this gate any more`, note);
    return;
  }
  if (runs.byId.has(id)) return;
  const job = new Run();
  runs.byId.set(id, job);
  const opening: Opening = { runs, call, note, cause, entry, job };
  let scope: MaybePromise<ExecutionScope | undefined>;
  try {
    scope = host.keeper.open(call, entry, note);
  } catch (error) {
    notOpened(opening, error);
    return;
  }
  afterWith(opening, scope, opened, notOpened);
}

function opened(opening: Opening, scope: ExecutionScope | undefined): void {
  const { runs, call, note, cause, entry, job } = opening;
  if (scope === undefined) {
    // The call moved on before it could start (a listener cancelled it as it began).
    forget(runs, call.id, job);
    return;
  }
  if (job.stage !== 'opening') {
    // Stopped while the keeper was opening it: the tool never starts; give back what was taken.
    attempt(
      () => scope.abandon?.(),
      () => undefined,
      runs.host.onError,
    );
    return;
  }
  if (cause === undefined) start(runs, call, entry, scope, job, note);
  else inDoubt(runs, call, entry, scope, job, note, cause);
}

function notOpened(opening: Opening, error: unknown): void {
  const { runs, call, note, job } = opening;
  forget(runs, call.id, job);
  runs.moves.fail(call.id, 'tool_error', `the call could not be started: ${messageOf(error)}`, note);
}

/** Hands a run whose outcome nobody saw to `reconcile`, with the ways out only this step can take. */
function inDoubt(
  runs: Runs,
  call: ExecutingCall,
  entry: ToolEntry,
  scope: ExecutionScope,
  job: Run,
  note: MoveNote,
  cause: DoubtCause,
): void {
  job.scope = scope;
  askReconcile({
    host: runs.host,
    moves: runs.moves,
    inputs: runs.inputs,
    call,
    entry,
    job,
    note,
    cause,
    key: scope.context?.idempotencyKey ?? call.id,
    end: (then) => void end(runs, job, call.id, then),
    commit: (output, evidence, by) => commitOutput(runs, call, scope, job, output, by, evidence),
    runAgain: (next) => runs.run(next, note),
  });
}

/** A run whose tool has started: what its outcome is handled with, passed along instead of closures. */
interface Running {
  readonly runs: Runs;
  readonly call: ExecutingCall;
  readonly entry: ToolEntry;
  readonly scope: ExecutionScope;
  readonly job: Run;
  readonly note: MoveNote;
}

/**
 * Starts the tool of a run the keeper has opened, then takes its result to the keeper's commit,
 * or ends the run with the reason it will not commit (a throw, a cancel, a timeout, an output
 * its schema refuses).
 */
function start(
  runs: Runs,
  call: ExecutingCall,
  entry: ToolEntry,
  scope: ExecutionScope,
  job: Run,
  note: MoveNote,
): void {
  const { host, moves, inputs } = runs;
  const { clock } = host;
  const { id } = call;
  const { tool } = entry;
  job.stage = 'running';
  job.scope = scope;
  const running: Running = { runs, call, entry, scope, job, note };
  if (tool.timeoutMs !== undefined) {
    const ms = tool.timeoutMs;
    job.timer = clock.setTimeout(() => {
      if (job.stage !== 'running') return;
      job.abort(new DOMException(`The call timed out after ${ms} ms.`, 'TimeoutError'));
      const message = `the tool did not finish within ${ms} ms`;
      if (doubtful(tool)) doubt(running, { kind: 'timeout', message });
      else void end(runs, job, id, () => moves.cancel(id, 'timeout', message, note));
    }, ms);
  }
  let result: unknown;
  try {
    result = tool.execute(inputs.take(call.input), new RunContext(job, id, tool.name, scope.context));
  } catch (error) {
    thrown(running, 'threw', error);
    return;
  }
  afterWith(running, result, receive, failedLater);
}

function failed(running: Running, message: string): void {
  const { runs, job, note } = running;
  const { id } = running.call;
  void end(runs, job, id, () => runs.moves.fail(id, 'tool_error', message, note));
}

// A tool whose outcome can be in doubt is not taken at its word when it throws: unless it marked
// the error `notExecuted`, its effect may have happened, and `reconcile` is asked.
function doubt(running: Running, cause: DoubtCause): void {
  const { runs, call, entry, scope, job, note } = running;
  inDoubt(runs, call, entry, scope, job, note, cause);
}

function thrown(running: Running, verb: string, error: unknown): void {
  if (running.job.stage !== 'running') return;
  const message = `the tool ${verb}: ${messageOf(error)}${frozenInputHint(error)}`;
  if (doubtful(running.entry.tool) && !isNotExecuted(error)) doubt(running, { kind: 'threw', message });
  else failed(running, message);
}

function failedLater(running: Running, error: unknown): void {
  thrown(running, 'failed', error);
}

function receive(running: Running, output: unknown): void {
  const { runs, call, entry, scope, job, note } = running;
  const { id } = call;
  const { moves } = runs;
  // A result that arrives after a cancel or a timeout is dropped here.
  if (job.stage !== 'running') return;
  let cancelReason: string | undefined;
  try {
    cancelReason = isCancel(output) ? textOf(output.reason) : undefined;
  } catch (error) {
    failed(running, `the tool's result could not be read: ${messageOf(error)}`);
    return;
  }
  if (cancelReason !== undefined) {
    const reason = cancelReason;
    void end(runs, job, id, () => moves.cancel(id, 'tool_cancelled', reason, note));
    return;
  }
  if (entry.validateOutput === undefined) {
    commitOutput(runs, call, scope, job, output, note);
    return;
  }
  check(entry.validateOutput, output, (verdict) => {
    if (job.stage !== 'running') return;
    if (verdict.ok) commitOutput(runs, call, scope, job, verdict.value, note);
    else {
      const list = verdict.issues.map((issue) => `${issue.path || '(output)'} ${issue.message}`).join('; ');
      void end(runs, job, id, () =>
        moves.fail(
          id,
          'output_invalid',
          `the tool's output does not match its output schema: ${list}`,
          note,
          verdict.issues,
        ),
      );
    }
  });
}

/**
 * Takes a verified output to the keeper's commit: a frozen copy, made once, is what the record
 * keeps and `commit` sees, so a tool that changes its object after returning it changes neither.
 * From here a stop only aborts the signal; the keeper's commit decides.
 */
function commitOutput(
  runs: Runs,
  call: ExecutingCall,
  scope: ExecutionScope,
  job: Run,
  result: unknown,
  note: MoveNote,
  evidence?: Omit<Evidence, 'at'>,
): void {
  const { host, moves } = runs;
  const { id } = call;
  let output: unknown;
  try {
    output = snapshot(result);
  } catch (error) {
    void end(runs, job, id, () =>
      moves.fail(id, 'tool_error', `the tool's output could not be read: ${messageOf(error)}`, note),
    );
    return;
  }
  job.stage = 'taken';
  if (job.timer !== undefined) host.clock.clearTimeout(job.timer);
  const taking: Taking = { runs, id, scope, job, note };
  let committed: MaybePromise<unknown>;
  try {
    committed = scope.commit(call, output, note, evidence);
  } catch (error) {
    notCommitted(taking, error);
    return;
  }
  afterWith(taking, committed, taken, notCommitted);
}

/** A run whose output is on its way to the keeper's commit. */
interface Taking {
  readonly runs: Runs;
  readonly id: string;
  readonly scope: ExecutionScope;
  readonly job: Run;
  readonly note: MoveNote;
}

function taken(taking: Taking): void {
  forget(taking.runs, taking.id, taking.job);
}

function notCommitted(taking: Taking, error: unknown): void {
  const { runs, id, scope, job, note } = taking;
  forget(runs, id, job);
  const failCommit = () =>
    runs.moves.fail(id, 'commit_error', `the result could not be committed: ${messageOf(error)}`, note);
  attempt(
    () => scope.abandon?.(),
    failCommit,
    (abandonError) => {
      runs.host.onError(abandonError);
      failCommit();
    },
  );
}

/**
 * Ends a run that will not commit, once: `then` (the move that says why) runs after the scope has
 * given back what it held. False-y (`undefined`) when the run had already ended or was taken.
 */
function end(runs: Runs, job: Run, id: string, then: () => void): MaybePromise<void> {
  const { host } = runs;
  if (job.stage === 'ended' || job.stage === 'taken') return;
  const { scope } = job;
  job.stage = 'ended';
  forget(runs, id, job);
  if (job.timer !== undefined) host.clock.clearTimeout(job.timer);
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
