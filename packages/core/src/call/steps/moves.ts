import { after } from '../maybe-promise.ts';
import type { CallEvent } from '../machine.ts';
import type { CallKeeper, MoveNote } from '../pipeline-host.ts';
import type {
  CancelledCode,
  FailedCode,
  Issue,
  Reason,
  RejectedCode,
  ToolCallRecord,
} from '../../record/record.ts';

/**
 * The moves the pipeline's steps ask of a keeper, each answered when the keeper has made it
 * (at once for the browser gate, after a write for a ledger). A keeper that throws or rejects is
 * reported, and the step that asked goes no further.
 *
 * @example
 * const moves = createMoves(keeper, console.error);
 * moves.reject('call_1', { code: 'unknown_tool', message: 'no tool named "x" is registered' }, note);
 */
export interface Moves {
  readonly move: (
    id: string,
    event: CallEvent,
    note: MoveNote,
    then?: (next: ToolCallRecord | undefined) => void,
  ) => void;
  /**
   * `validate`, then `execute` in the same move where the keeper can make them as one; `then` gets
   * the record after what the keeper made (`executing`, or `validated` when it made one move).
   */
  readonly validateAndExecute: (
    id: string,
    event: Extract<CallEvent, { type: 'validate' }>,
    note: MoveNote,
    then: (next: ToolCallRecord | undefined) => void,
  ) => void;
  readonly reject: (id: string, reason: Reason<RejectedCode>, note: MoveNote) => void;
  readonly fail: (
    id: string,
    code: FailedCode,
    message: string,
    note: MoveNote,
    issues?: readonly Issue[],
  ) => void;
  readonly cancel: (id: string, code: CancelledCode, message: string, note: MoveNote) => void;
}

/**
 * Creates the moves over a keeper.
 *
 * @example
 * const moves = createMoves(host.keeper, host.onError);
 */
export function createMoves(keeper: CallKeeper, onError: (error: unknown) => void): Moves {
  const move: Moves['move'] = (id, event, note, then) =>
    after(keeper.move(id, event, note), then ?? ignore, onError);
  const both = keeper.validateAndExecute;
  return {
    move,
    validateAndExecute:
      both === undefined ? move : (id, event, note, then) => after(both(id, event, note), then, onError),
    reject: (id, reason, note) => move(id, { type: 'reject', reason }, note),
    fail: (id, code, message, note, issues) =>
      move(id, { type: 'fail', reason: issues ? { code, message, issues } : { code, message } }, note),
    cancel: (id, code, message, note) => move(id, { type: 'cancel', reason: { code, message } }, note),
  };
}

function ignore(): void {
  // A move nobody waits on.
}
