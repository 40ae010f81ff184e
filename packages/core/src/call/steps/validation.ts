import { problemReason, readArguments } from '../../proposal/arguments.ts';
import { checkValue } from '../../proposal/value-walk.ts';
import { PARALLEL_WRAPPER, parallelWrapperReason } from '../../proposal/parallel-wrapper.ts';
import { repairValues, type RepairKind } from '../../proposal/repair.ts';
import type { CallEvent } from '../machine.ts';
import type { ExecutingCall, MoveNote, PipelineHost } from '../pipeline-host.ts';
import { asksNoOne } from './authorization.ts';
import type { Issue, Reason, RejectedCode, Repair, ToolCallRecord } from '../../record/record.ts';
import { messageOf } from '../../record/text.ts';
import { idempotencyKeyOf } from '../../tool/reconcile.ts';
import type { ToolEntry } from '../../tool/tool-entry.ts';
import type { Moves } from './moves.ts';
import type { ToolInputs } from './tool-inputs.ts';
import { check } from './verdict.ts';

/**
 * The first step of a call whose arguments are in: find its tool, read the arguments within the
 * limits, validate them (once more after the repairs the tool allows), and record the validated
 * input; a call that fails any of it is rejected with the reason.
 *
 * @example
 * const validate = createValidation(host, moves, inputs, (validated) => authorize(validated, note));
 * validate(call.id, call.name, '{"amount_cents":1250}', false, [], note);
 */
export type Validation = (
  id: string,
  name: string,
  raw: unknown,
  truncated: boolean,
  repairs: readonly Repair[],
  note: MoveNote,
) => void;

/**
 * Creates the step; `next` gets each call that moved to `validated`, and `run` each the keeper
 * moved on to `executing` in the same move (a call no one is asked about).
 *
 * @example
 * const validate = createValidation(host, moves, createToolInputs(), authorize, execution.run);
 */
export function createValidation(
  host: PipelineHost,
  moves: Moves,
  inputs: ToolInputs,
  next: (validated: ToolCallRecord, note: MoveNote) => void,
  run: (call: ExecutingCall, note: MoveNote) => void,
): Validation {
  const { limits } = host;
  const { reject } = moves;

  function rejectInvalid(id: string, name: string, issues: readonly Issue[], note: MoveNote): void {
    const list = issues.map((issue) => `${issue.path || '(arguments)'} ${issue.message}`).join('; ');
    reject(
      id,
      {
        code: 'invalid_arguments',
        message: `the arguments of "${name}" do not match its schema: ${list}`,
        issues,
      },
      note,
    );
  }

  function accept(
    id: string,
    entry: ToolEntry,
    repairs: readonly Repair[],
    value: unknown,
    owned: boolean,
    note: MoveNote,
  ): void {
    let input: unknown;
    try {
      input = inputs.keep(value, owned);
    } catch (error) {
      reject(
        id,
        {
          code: 'invalid_arguments',
          message: `the value the validator answered could not be read: ${messageOf(error)}`,
        },
        note,
      );
      return;
    }
    // The effect must have a name before anything may run: a key the tool cannot make refuses the call.
    if (entry.tool.idempotencyKey !== undefined) {
      try {
        idempotencyKeyOf(entry.tool, input, { id, name: entry.tool.name });
      } catch (error) {
        reject(id, { code: 'invalid_arguments', message: messageOf(error) }, note);
        return;
      }
    }
    const event: Extract<CallEvent, { type: 'validate' }> =
      repairs.length === 0 ? { type: 'validate', input } : { type: 'validate', input, repairs };
    if (!asksNoOne(entry.tool)) {
      moves.move(id, event, note, (validated) => {
        if (validated !== undefined) next(validated, note);
      });
      return;
    }
    moves.validateAndExecute(id, event, note, (moved) => {
      if (moved?.status === 'executing') run(moved as ExecutingCall, note);
      else if (moved !== undefined) next(moved, note);
    });
  }

  return function validate(id, name, raw, truncated, earlier, note) {
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
    const allowed = entry.tool.repair ?? NO_REPAIR_KINDS;
    let args: ReturnType<typeof readArguments>;
    try {
      args = readArguments(raw, limits, allowed);
    } catch (error) {
      args = {
        ok: false,
        reason: { code: 'invalid_shape', message: `the arguments could not be read: ${messageOf(error)}` },
      };
    }
    if (!args.ok) {
      reject(id, args.reason, note);
      return;
    }
    const read = args;
    check(entry.validateInput, read.value, (first) => {
      if (first.ok)
        return accept(
          id,
          entry,
          joined(earlier, read.repairs),
          first.value,
          first.value === read.value,
          note,
        );
      const repaired = repairValues(read.value, first.issues, allowed, limits);
      if (repaired === undefined) return rejectInvalid(id, name, first.issues, note);
      // Decoded strings are new structure: the same depth and `__proto__` rules apply to them, and
      // the walk freezes them and the containers the repair copied, as the first read froze the rest.
      const checked = checkValue(repaired.value, limits.maxDepth);
      if (checked.kind !== 'ok') return reject(id, problemReason(checked, limits), note);
      check(entry.validateInput, repaired.value, (second) => {
        if (second.ok)
          accept(
            id,
            entry,
            [...earlier, ...read.repairs, ...repaired.repairs],
            second.value,
            second.value === repaired.value,
            note,
          );
        else rejectInvalid(id, name, first.issues, note);
      });
    });
  };
}

const NO_REPAIR_KINDS: readonly RepairKind[] = Object.freeze([]);

/** Two lists of repairs as one; most calls have none, and get no new array. */
function joined(first: readonly Repair[], second: readonly Repair[]): readonly Repair[] {
  if (second.length === 0) return first;
  return first.length === 0 ? second : [...first, ...second];
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
    message:
      message ??
      'the provider cut this call off at its output limit before the arguments were complete; nothing was run',
  };
}

function unknownToolMessage(name: string, names: readonly string[]): string {
  const shown = names
    .slice(0, 20)
    .map((n) => `"${n}"`)
    .join(', ');
  const more = names.length > 20 ? `, and ${names.length - 20} more` : '';
  return names.length === 0
    ? `no tool named "${name}" is registered (this app has no tools)`
    : `no tool named "${name}" is registered; the tools are ${shown}${more}`;
}
