import type { ProposalSource } from '../record/record.ts';
import type { StreamGate } from '../gate/stream-gate.ts';
import type { Previews } from './previews.ts';
import type { Slot } from './slot.ts';

/**
 * What one assistant turn's stream reader keeps: its calls by the provider's key, the turn's id,
 * and whether the turn is over. The parts of a reader share this one object and nothing else.
 *
 * @example
 * const turn = createStreamTurn(gate, 'anthropic', previews, options.turn);
 * for (const slot of inOrder(turn)) close(turn, slot);
 */
export interface StreamTurn {
  readonly gate: StreamGate;
  readonly source: ProposalSource;
  readonly previews: Previews;
  readonly slots: Map<string, Slot>;
  /** The turn's id, tagged on each call (the caller's, or the provider's response id once known). */
  id: string | undefined;
  /** The id is settled: the caller gave it, or a call has been opened with the one there was. */
  idFixed: boolean;
  finished: boolean;
  /** Resolves once the turn is over (ended, broken off or aborted). */
  readonly over: Promise<void>;
  readonly resolveOver: () => void;
}

/**
 * A turn with no calls yet.
 *
 * @example
 * const turn = createStreamTurn(gate, 'openai-chat', createPreviews(gate, clock, 50), undefined);
 */
export function createStreamTurn(
  gate: StreamGate,
  source: ProposalSource,
  previews: Previews,
  id: string | undefined,
): StreamTurn {
  let resolveOver!: () => void;
  const over = new Promise<void>((resolve) => {
    resolveOver = resolve;
  });
  return {
    gate,
    source,
    previews,
    slots: new Map(),
    id,
    idFixed: id !== undefined,
    finished: false,
    over,
    resolveOver,
  };
}

/**
 * The turn's calls in the provider's order (its positions, then the order they started in).
 *
 * @example
 * inOrder(turn).map((slot) => slot.name);
 */
export function inOrder(turn: StreamTurn): Slot[] {
  return [...turn.slots.values()].sort((a, b) => a.position - b.position || a.order - b.order);
}

/**
 * Ends the turn once: `false` when it was already over, else runs `settle` on it, tells the gate
 * the turn is over (`gate.stream.end`) and resolves `over`.
 *
 * @example
 * finish(turn, () => { for (const slot of inOrder(turn)) close(turn, slot); });
 */
export function finish(turn: StreamTurn, settle: () => void): boolean {
  if (turn.finished) return false;
  turn.finished = true;
  settle();
  turn.gate.stream.end?.({ id: turn.id, calls: inOrder(turn).flatMap((slot) => slot.callIds) });
  turn.resolveOver();
  return true;
}
