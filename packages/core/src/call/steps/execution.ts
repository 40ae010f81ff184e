import { after, attempt, type MaybePromise } from '../maybe-promise.ts';
import type { ExecutingCall, ExecutionScope, MoveNote, PipelineHost } from '../pipeline-host.ts';
import { snapshot } from '../snapshot.ts';
import { messageOf, textOf } from '../text.ts';
import { isCancel } from '../../tool/tool.ts';
import type { ToolEntry } from '../../tool/tool-entry.ts';
import type { Moves } from './moves.ts';
import { Run, RunContext } from './run.ts';
import type { ToolInputs } from './tool-inputs.ts';
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
  const runs: Runs = { host, moves, inputs, byId: new Map() };
  const { keeper } = host;

  function run(call: ExecutingCall, note: MoveNote): void {
    const { id } = call;
    const entry = host.entry(call.name, id);
    if (entry === undefined) {
      moves.fail(id, 'tool_error', `no tool named "${call.name}" is registered on this gate any more`, note);
      return;
    }
    // One run per call in this process, whoever asks.
    if (runs.byId.has(id)) return;
    const job = new Run();
    runs.byId.set(id, job);
    attempt(
      () => keeper.open(call, entry, note),
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
        start(runs, call, entry, scope, job, note);
      },
      (error) => {
        forget(runs, id, job);
        moves.fail(id, 'tool_error', `the call could not be started: ${messageOf(error)}`, note);
      },
    );
  }

  return {
    run,
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
  if (tool.timeoutMs !== undefined) {
    const ms = tool.timeoutMs;
    job.timer = clock.setTimeout(() => {
      if (job.stage !== 'running') return;
      job.abort(new DOMException(`The call timed out after ${ms} ms.`, 'TimeoutError'));
      void end(runs, job, id, () =>
        moves.cancel(id, 'timeout', `the tool did not finish within ${ms} ms`, note),
      );
    }, ms);
  }
  let result: unknown;
  try {
    result = tool.execute(inputs.take(call.input), new RunContext(job, id, tool.name, scope.context));
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
      void end(runs, job, id, () => moves.cancel(id, 'tool_cancelled', reason, note));
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
