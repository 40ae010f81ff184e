import type { Clock } from '../call/clock.ts';
import { createPending, type CallEvent } from '../call/machine.ts';
import type { MoveNote, Pipeline } from '../call/pipeline.ts';
import type { ProposalSource, Repair, ToolCallRecord } from '../record/record.ts';
import { truncatedReason } from '../call/steps/validation.ts';
import { messageOf } from '../record/text.ts';
import type { Limits } from '../proposal/limits.ts';
import { readProposal } from '../proposal/proposal.ts';
import type { CallBook } from './call-book.ts';
import { refusal, type ProposeOptions, type StreamGate } from './stream-gate.ts';

/**
 * How calls enter the browser gate: whole proposals (`propose`) and streamed ones (`stream`), each
 * turned into a `pending` record and handed to the pipeline once its arguments are in. Each entry
 * is one batch, so a sync tool's whole life reaches subscribers as one update.
 *
 * @example
 * const intake = createIntake({ book, limits, clock, generateId, pipeline, move, watch });
 * const record = intake.propose(toolCall);
 */
export interface Intake {
  readonly propose: StreamGate['propose'];
  readonly stream: StreamGate['stream'];
}

/**
 * What the intake needs of its gate.
 *
 * @example
 * const init: IntakeInit = { book, limits, clock, generateId: () => crypto.randomUUID(), pipeline, move, watch };
 */
export interface IntakeInit {
  readonly book: CallBook;
  readonly limits: Limits;
  readonly clock: Clock;
  /** Makes an id for a call that arrives without one. */
  readonly generateId: () => string;
  readonly pipeline: Pipeline;
  /** Makes one move of the call and keeps it; `undefined` when the move is not allowed. */
  readonly move: (id: string, event: CallEvent) => ToolCallRecord | undefined;
  /** Cancels the call when the caller's signal aborts. */
  readonly watch: (id: string, signal: AbortSignal) => void;
}

/**
 * The browser gate has one person in front of it; the server gate names each actor.
 *
 * @example
 * pipeline.execute(id, BROWSER);
 */
export const BROWSER: MoveNote = { actor: 'browser' };

/**
 * Creates the intake of one gate.
 *
 * @example
 * const { propose, stream } = createIntake(init);
 */
export function createIntake(init: IntakeInit): Intake {
  const { book, limits, clock, generateId, pipeline, move } = init;

  function create(
    id: string | undefined,
    name: string,
    source: ProposalSource,
    turn: string | undefined,
  ): ToolCallRecord {
    let callId = id;
    if (callId === undefined) {
      do callId = generateId();
      while (book.lookup(callId) !== undefined);
    }
    const record = createPending({
      id: callId,
      name,
      source,
      generatedId: id === undefined,
      turn,
      at: clock.now(),
    });
    book.write(record, undefined);
    return record;
  }

  function resolve(id: string, raw: unknown, truncated: boolean, repairs: readonly Repair[]): void {
    const call = book.get(id);
    if (call?.status === 'pending') pipeline.resolve(id, call.name, raw, truncated, repairs, BROWSER);
  }

  function propose(input: unknown, options?: ProposeOptions): ToolCallRecord {
    const reading = readSafely(input, limits);
    const id = options?.id ?? (reading.ok ? reading.proposal.id : reading.id);
    if (id !== undefined) {
      const known = book.lookup(id);
      if (known !== undefined) return known;
    }
    if (!reading.ok) {
      const record = create(id, reading.name ?? '', reading.source, options?.turn);
      return move(record.id, { type: 'reject', reason: reading.reason }) ?? record;
    }
    const { proposal } = reading;
    const record = create(id, proposal.name, proposal.source, options?.turn);
    if (options?.signal !== undefined) init.watch(record.id, options.signal);
    resolve(record.id, proposal.arguments, proposal.truncated === true, options?.repairs ?? NO_REPAIRS);
    return book.lookup(record.id) ?? record;
  }

  return {
    propose: (input, options) => book.batch(() => propose(input, options)),
    stream: {
      open(opening) {
        const known = opening.id === undefined ? undefined : book.lookup(opening.id);
        return known ?? book.batch(() => create(opening.id, opening.name, opening.source, opening.turn));
      },
      preview(id, preview) {
        move(id, { type: 'preview', preview });
      },
      close: (id, rawArguments) =>
        book.batch(() => {
          resolve(id, rawArguments, false, NO_REPAIRS);
          return book.lookup(id);
        }),
      truncate: (id, message) =>
        book.batch(() => {
          move(id, { type: 'reject', reason: truncatedReason(message) });
          return book.lookup(id);
        }),
      refuse: (id, reason) =>
        book.batch(() => {
          if (book.get(id)?.status === 'pending') move(id, { type: 'reject', reason: refusal(reason) });
          return book.lookup(id);
        }),
    },
  };
}

const NO_REPAIRS: readonly Repair[] = Object.freeze([]);

function readSafely(input: unknown, limits: Limits): ReturnType<typeof readProposal> {
  try {
    return readProposal(input, limits);
  } catch (error) {
    // Only reachable through hostile objects (a throwing getter): still an answer, never a throw.
    return {
      ok: false,
      source: 'normalised',
      reason: { code: 'invalid_shape', message: `the proposal could not be read: ${messageOf(error)}` },
    };
  }
}
