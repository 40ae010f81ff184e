import { isTerminal, type ToolCallRecord } from '../record/record.ts';
import type { SettledTurn } from './turn.ts';

/**
 * Why the guard will not send a turn's reply back to the model on its own.
 * - `auto_turn_limit`: that many turns in a row went back without a person in between;
 * - `repeated_rejections`: the same tool was rejected that many times in a row.
 *
 * @example
 * const code: ContinuationStopCode = 'repeated_rejections';
 */
export type ContinuationStopCode = 'auto_turn_limit' | 'repeated_rejections';

/**
 * What to do with one assistant turn's reply:
 * - `send`: every call is terminal; send the reply to the model now.
 * - `wait`: some calls are still running or await a person (`awaitingApproval`); decide again when they settle.
 * - `stop`: do not send it automatically; tell the user `reason.message`, and when the reply is
 *   sent (with the user's next message), pass `notice` to the reply helper so the model is told to stop.
 * - `done`: the turn had no tool calls; there is nothing to send.
 *
 * @example
 * const decision = guard.decide(turn);
 * if (decision.action === 'send') messages.push(...openaiChatReply(turn));
 */
export type ContinuationDecision =
  | { readonly action: 'send'; readonly autoTurns: number }
  | {
      readonly action: 'wait';
      readonly pending: readonly string[];
      readonly awaitingApproval: readonly string[];
    }
  | {
      readonly action: 'stop';
      readonly reason: {
        readonly code: ContinuationStopCode;
        readonly message: string;
        readonly tool?: string;
      };
      readonly notice: string;
    }
  | { readonly action: 'done' };

/**
 * Limits for automatic continuation.
 *
 * @example
 * createContinuationGuard({ maxAutoTurns: 5, maxRejectionsPerTool: 3 });
 */
export interface ContinuationGuardOptions {
  /** Consecutive turns sent back without a person in between (default 3). */
  readonly maxAutoTurns?: number;
  /** Consecutive turns in which a call of the same tool was rejected (default 2). */
  readonly maxRejectionsPerTool?: number;
}

/**
 * Decides, turn by turn, whether a reply may go back to the model without a person.
 *
 * @example
 * const guard: ContinuationGuard = createContinuationGuard({ maxAutoTurns: 5 });
 * onUserMessage(() => guard.reset());
 */
export interface ContinuationGuard {
  /**
   * The decision for one turn's calls (a settled turn from a stream reader, or the turn's records
   * as they stand). Deciding the same turn object (or the same array) again returns the same
   * decision and counts nothing twice; any other object is another turn, even when its calls have
   * the same ids (a model that reuses ids gets its old results replayed, and that must count).
   */
  readonly decide: (turn: SettledTurn | readonly ToolCallRecord[]) => ContinuationDecision;
  /** A person spoke (sent a message, approved, resumed): the counts start again. */
  readonly reset: () => void;
  /** The counts as they stand, for display. */
  readonly counts: () => {
    readonly autoTurns: number;
    readonly rejections: Readonly<Record<string, number>>;
  };
}

/**
 * Creates the guard against runaway auto-continue loops (a tab left open re-submitting for hours).
 * A turn's reply is sent automatically only when every call of the turn is terminal and none
 * awaits a person; after `maxAutoTurns` consecutive automatic turns (default 3), or
 * `maxRejectionsPerTool` consecutive rejections of the same tool (default 2), it stops, says why,
 * and gives the notice that tells the model to stop. Call `reset()` when a person speaks.
 *
 * @example
 * const guard = createContinuationGuard();
 * const turn = await reader.settled();
 * const decision = guard.decide(turn);
 * if (decision.action === 'send') await continueChat(openaiChatReply(turn));
 * else if (decision.action === 'stop') showBanner(decision.reason.message), (pendingNotice = decision.notice);
 */
export function createContinuationGuard(options: ContinuationGuardOptions = {}): ContinuationGuard {
  const maxAutoTurns = options.maxAutoTurns ?? 3;
  const maxRejections = options.maxRejectionsPerTool ?? 2;
  for (const [name, value] of [
    ['maxAutoTurns', maxAutoTurns],
    ['maxRejectionsPerTool', maxRejections],
  ] as const) {
    if (!Number.isInteger(value) || value < 1)
      throw new TypeError(
        `createContinuationGuard: \`${name}\` must be a positive integer (got ${String(value)}).`,
      );
  }
  let autoTurns = 0;
  let rejections = new Map<string, number>();
  let decided = new WeakMap<object, ContinuationDecision>();

  function decide(turn: SettledTurn | readonly ToolCallRecord[]): ContinuationDecision {
    const calls: readonly ToolCallRecord[] = isRecordList(turn)
      ? turn
      : turn.answers.flatMap((answer) => answer.calls);
    if (calls.length === 0) return { action: 'done' };
    const pending = calls.filter((call) => !isTerminal(call.status));
    if (pending.length > 0) {
      return {
        action: 'wait',
        pending: pending.map((call) => call.id),
        awaitingApproval: pending
          .filter((call) => call.status === 'awaiting_approval')
          .map((call) => call.id),
      };
    }
    const known = decided.get(turn);
    if (known !== undefined) return known;

    // Counted per turn: parallel calls of one tool rejected together are one failed attempt.
    const rejected = new Set(calls.filter((call) => call.status === 'rejected').map((call) => call.name));
    for (const call of calls) if (!rejected.has(call.name)) rejections.delete(call.name);
    for (const tool of rejected) rejections.set(tool, (rejections.get(tool) ?? 0) + 1);
    autoTurns++;
    const decision = judge();
    decided.set(turn, decision);
    return decision;
  }

  function judge(): ContinuationDecision {
    for (const [tool, count] of rejections) {
      if (count >= maxRejections) {
        return {
          action: 'stop',
          reason: {
            code: 'repeated_rejections',
            tool,
            message: `"${tool}" was rejected in ${count} turns in a row, so the conversation was paused instead of sending its reply to the model again`,
          },
          notice: `Stop calling "${tool}": it was rejected ${count} times in a row. Do not call any tool now; tell the user what went wrong and what you need from them.`,
        };
      }
    }
    if (autoTurns > maxAutoTurns) {
      return {
        action: 'stop',
        reason: {
          code: 'auto_turn_limit',
          message: `${maxAutoTurns} replies in a row went back to the model without a person, so the conversation was paused`,
        },
        notice: `You have used ${maxAutoTurns} tool turns in a row without the user. Do not call any tool now; summarise what was done and ask the user how to continue.`,
      };
    }
    return { action: 'send', autoTurns };
  }

  return {
    decide,
    reset() {
      autoTurns = 0;
      rejections = new Map();
      decided = new WeakMap();
    },
    counts: () => ({ autoTurns, rejections: Object.fromEntries(rejections) }),
  };
}

function isRecordList(turn: SettledTurn | readonly ToolCallRecord[]): turn is readonly ToolCallRecord[] {
  return Array.isArray(turn);
}
