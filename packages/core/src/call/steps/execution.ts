import { after, attempt, type MaybePromise } from '../maybe-promise.ts';
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
    open(runs, call, note, (entry, scope, job) => start(runs, call, entry, scope, job, note));
  }

  return {
    run,
    reconcile(call, cause, note) {
      open(runs, call, note, (entry, scope, job) => inDoubt(runs, call, entry, scope, job, note, cause));
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

/**
 * Opens a run of a call that has just moved to `executing` (or was claimed by a recovery): one run
 * per call in this process, whoever asks; `then` gets the scope the keeper opened, unless the call
 * moved on meanwhile or the run was stopped while it opened.
 */
function open(
  runs: Runs,
  call: ExecutingCall,
  note: MoveNote,
  then: (entry: ToolEntry, scope: ExecutionScope, job: Run) => void,
): void {
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
  attempt(
    () => host.keeper.open(call, entry, note),
    (scope) => {
      if (scope === undefined) {
        // The call moved on before it could start (a listener cancelled it as it began).
        forget(runs, id, job);
        return;
      }
      if (job.stage !== 'opening') {
        // Stopped while the keeper was opening it: the tool never starts; give back what was taken.
        attempt(
          () => scope.abandon?.(),
          () => undefined,
          host.onError,
        );
        return;
      }
      then(entry, scope, job);
    },
    (error) => {
      forget(runs, id, job);
      moves.fail(id, 'tool_error', `the call could not be started: ${messageOf(error)}`, note);
    },
  );
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
  const failed = (message: string) =>
    void end(runs, job, id, () => moves.fail(id, 'tool_error', message, note));
  // A tool whose outcome can be in doubt is not taken at its word when it throws: unless it marked
  // the error `notExecuted`, its effect may have happened, and `reconcile` is asked.
  const doubt = (cause: DoubtCause) => inDoubt(runs, call, entry, scope, job, note, cause);
  const thrown = (verb: string, error: unknown) => {
    if (job.stage !== 'running') return;
    const message = `the tool ${verb}: ${messageOf(error)}${frozenInputHint(error)}`;
    if (doubtful(tool) && !isNotExecuted(error)) doubt({ kind: 'threw', message });
    else failed(message);
  };
  if (tool.timeoutMs !== undefined) {
    const ms = tool.timeoutMs;
    job.timer = clock.setTimeout(() => {
      if (job.stage !== 'running') return;
      job.abort(new DOMException(`The call timed out after ${ms} ms.`, 'TimeoutError'));
      const message = `the tool did not finish within ${ms} ms`;
      if (doubtful(tool)) doubt({ kind: 'timeout', message });
      else void end(runs, job, id, () => moves.cancel(id, 'timeout', message, note));
    }, ms);
  }
  let result: unknown;
  try {
    result = tool.execute(inputs.take(call.input), new RunContext(job, id, tool.name, scope.context));
  } catch (error) {
    thrown('threw', error);
    return;
  }
  after(result, receive, (error) => thrown('failed', error));

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
  attempt(
    () => scope.commit(call, output, note, evidence),
    () => forget(runs, id, job),
    (error) => {
      forget(runs, id, job);
      const failCommit = () =>
        moves.fail(id, 'commit_error', `the result could not be committed: ${messageOf(error)}`, note);
      attempt(
        () => scope.abandon?.(),
        failCommit,
        (abandonError) => {
          host.onError(abandonError);
          failCommit();
        },
      );
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
