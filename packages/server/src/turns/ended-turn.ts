import type { SettledCall } from '@toolgate/core';

/**
 * A turn whose last call has ended, as `onTurnSettled` gets it: the calls one stream reader read
 * over `serverGate.turn(...)`, each as it ended, in the provider's order. The same turn (by
 * `session` and `id`) may come again, on this process or another, when an earlier run threw or
 * its process died; it never runs on two processes at once while both hold their claim.
 *
 * @example
 * onTurnSettled: async (turn: EndedTurn) => {
 *   const replies = turn.calls.map((call) => toolResult(call, 'openai-chat'));
 *   await continueChat(turn.session, replies, { signal: turn.signal });
 * }
 */
export interface EndedTurn {
  /** The turn's id: the one given to `serverGate.turn`, else the provider's response id, else a new one. */
  readonly id: string;
  readonly session: string;
  /** Who the model acted for in this turn. */
  readonly principal: string;
  readonly calls: readonly SettledCall[];
  /** 1 on the first run; more when an earlier run threw or its process died. */
  readonly attempt: number;
  /** Aborts when this process has lost its claim on the turn (another may take it over) or the gate closes. */
  readonly signal: AbortSignal;
}

/**
 * The model's next step, once a turn's last call has ended; see `createServerGate`'s `onTurnSettled`.
 *
 * @example
 * const next: TurnSettledHandler = async (turn) => answerModel(turn);
 */
export type TurnSettledHandler = (turn: EndedTurn) => unknown;
