import { after } from '../maybe-promise.ts';
import type { ExecutingCall, MoveNote, PipelineHost } from '../pipeline-host.ts';
import type { Evidence } from '../../record/record.ts';
import { messageOf } from '../../record/text.ts';
import { RECONCILE_TIMEOUT_MS, readReconciliation, type Reconciliation } from '../../tool/reconcile.ts';
import type { ToolEntry } from '../../tool/tool-entry.ts';
import type { Moves } from './moves.ts';
import type { Run } from './run.ts';
import type { ToolInputs } from './tool-inputs.ts';
import { check } from './verdict.ts';

/** Who settles a run in doubt by what `reconcile` answered: the gate itself, on the downstream's word. */
const RECONCILE: MoveNote = { actor: 'toolgate:reconcile' };

/**
 * Why a run's outcome is in doubt: it threw (an error not marked `notExecuted`), it ran past its
 * `timeoutMs`, or the process running it died (recovery found it). What each `reconcile` answer
 * leads to depends on it: after a timeout, `not_executed` ends the call as timed out rather than
 * running it again.
 *
 * @example
 * const cause: DoubtCause = { kind: 'threw', message: 'the tool failed: socket hang up' };
 */
export interface DoubtCause {
  readonly kind: 'threw' | 'timeout' | 'crashed';
  readonly message: string;
}

/**
 * A run in doubt, with what settling it takes: the pipeline's moves, the tool, the run, and the
 * three ways out the execution step owns (end the run with a move, commit an output, run again).
 *
 * @example
 * askReconcile({ host, moves, inputs, call, entry, job, note, cause, key, end, commit, runAgain });
 */
export interface InDoubt {
  readonly host: PipelineHost;
  readonly moves: Moves;
  readonly inputs: ToolInputs;
  readonly call: ExecutingCall;
  readonly entry: ToolEntry;
  readonly job: Run;
  readonly note: MoveNote;
  readonly cause: DoubtCause;
  /** The key the run in doubt used downstream. */
  readonly key: string;
  /** Ends the run without a commit (giving back what it held), then makes the move `then` makes. */
  readonly end: (then: () => void) => void;
  /** Commits an output found downstream, as a run's own output is committed, in `note`'s name. */
  readonly commit: (output: unknown, evidence: Omit<Evidence, 'at'>, note: MoveNote) => void;
  /** Runs the call again (after the `rerun` move). */
  readonly runAgain: (call: ExecutingCall) => void;
}

/**
 * Asks the tool's `reconcile` what became of a run nobody saw end, under the run's claim (the
 * keeper renews its lease while the run is open), and settles the call by the answer: committed
 * with the output found (if the output schema takes it), run again once with the same key, or
 * (unknown, a throw, an answer of another shape, none in time) `onUnknown`: interrupted or held.
 *
 * @example
 * askReconcile(inDoubt);
 */
export function askReconcile(doubt: InDoubt): void {
  const { host, call, entry, job } = doubt;
  const { tool } = entry;
  job.stage = 'reconciling';
  if (job.timer !== undefined) host.clock.clearTimeout(job.timer);
  job.timer = undefined;
  if (tool.reconcile === undefined) {
    unknown(doubt, 'the tool has no reconcile to ask');
    return;
  }
  const asking = new AbortController();
  job.asking = asking;
  const ms = tool.timeoutMs ?? RECONCILE_TIMEOUT_MS;
  const current = () => job.stage === 'reconciling' && job.asking === asking && !asking.signal.aborted;
  const timer = (job.timer = host.clock.setTimeout(() => {
    if (!current()) return;
    asking.abort(new DOMException(`reconcile did not answer within ${ms} ms`, 'TimeoutError'));
    unknown(doubt, `reconcile did not answer within ${ms} ms`);
  }, ms));
  const answered = (reading: ReturnType<typeof readReconciliation>) => {
    if (!current()) return;
    host.clock.clearTimeout(timer);
    decide(doubt, reading);
  };
  const failed = (error: unknown) =>
    answered({ outcome: 'unknown', problem: `reconcile threw: ${messageOf(error)}` });
  let answer: unknown;
  try {
    answer = tool.reconcile({
      input: doubt.inputs.take(call.input),
      call: { id: call.id, name: tool.name },
      idempotencyKey: doubt.key,
      attempt: call.attempt ?? 1,
      signal: asking.signal,
    });
  } catch (error) {
    failed(error);
    return;
  }
  after(answer, (value) => answered(readReconciliation(value)), failed);
}

function decide(
  doubt: InDoubt,
  reading: Reconciliation | { readonly outcome: 'unknown'; readonly problem: string },
): void {
  const { entry, job, moves, call, cause } = doubt;
  const note = RECONCILE;
  if (reading.outcome === 'unknown') {
    unknown(doubt, 'problem' in reading ? reading.problem : 'reconcile could not tell');
    return;
  }
  if (reading.outcome === 'not_executed') {
    const confirmed = `${cause.message}; reconcile confirms its effect never happened`;
    if (cause.kind === 'timeout') {
      doubt.end(() => moves.cancel(call.id, 'timeout', confirmed, note));
    } else if ((call.attempt ?? 1) >= 2) {
      doubt.end(() =>
        moves.fail(call.id, 'tool_error', `${confirmed} (it was run again once, and failed again)`, note),
      );
    } else {
      doubt.end(() =>
        moves.move(call.id, { type: 'rerun' }, note, (next) => {
          if (next?.status === 'executing') doubt.runAgain(next as ExecutingCall);
        }),
      );
    }
    return;
  }
  const { output } = reading;
  if (entry.validateOutput === undefined) {
    doubt.commit(output, { source: 'downstream' }, note);
    return;
  }
  check(entry.validateOutput, output, (verdict) => {
    if (job.stage !== 'reconciling') return;
    if (verdict.ok) {
      doubt.commit(verdict.value, { source: 'downstream' }, note);
      return;
    }
    const list = verdict.issues.map((issue) => `${issue.path || '(output)'} ${issue.message}`).join('; ');
    unknown(
      doubt,
      `reconcile answered committed, but its output does not match the output schema (${list}), so it was not committed`,
    );
  });
}

/** Nobody can tell: the call is held for a person, or ends interrupted, as the tool says. */
function unknown(doubt: InDoubt, why: string): void {
  const { moves, call, entry, cause } = doubt;
  const note = RECONCILE;
  const message = `${cause.message}; ${why}`;
  if (entry.tool.onUnknown === 'hold') {
    doubt.end(() => moves.move(call.id, { type: 'doubt', message }, note));
    return;
  }
  doubt.end(() =>
    moves.fail(call.id, 'interrupted', `${message}; it may or may not have taken effect`, note),
  );
}
