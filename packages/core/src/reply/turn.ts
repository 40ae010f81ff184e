import { outcomeText } from './outcome.ts';
import { isTerminal, type SettledCall } from '../record/record.ts';

/**
 * One call id of an assistant turn that the reply must answer, with the gate calls that answer it:
 * usually one; for an unwrapped `multi_tool_use.parallel` wrapper, the calls that were inside it.
 *
 * @example
 * const answer: TurnAnswer = { id: 'call_1', name: 'charge', generatedId: false, calls: [record] };
 */
export interface TurnAnswer {
  /** The id the provider gave the call, which the reply must echo. */
  readonly id: string;
  readonly name: string;
  /** True when the model sent no id (Gemini often does not): the reply must not echo a made-up one. */
  readonly generatedId: boolean;
  readonly calls: readonly SettledCall[];
}

/**
 * Every call of one assistant turn, settled, in the provider's order: what a reply answers.
 *
 * @example
 * const turn: SettledTurn = await reader.settled();
 * messages.push(...openaiChatReply(turn));
 */
export interface SettledTurn {
  /** The turn id the calls were tagged with (the provider's response or message id, unless you gave one). */
  readonly turn: string | undefined;
  readonly answers: readonly TurnAnswer[];
}

/**
 * What a reply helper accepts: a settled turn from a stream reader, or settled call records, each
 * answering its own id.
 *
 * @example
 * const source: ReplySource = [await gate.settled('call_1'), await gate.settled('call_2')];
 */
export type ReplySource = SettledTurn | readonly SettledCall[];

/**
 * What every reply helper takes beside the turn.
 *
 * @example
 * openaiChatReply(turn, { notice: decision.notice });
 */
export interface ReplyOptions {
  /**
   * Text for the model after the results, in the provider's convention (the continuation guard's
   * `notice` when it stops a loop, for example).
   */
  readonly notice?: string;
}

/**
 * The answers of a reply source, each call id once, in order. Throws when a call has not settled,
 * since an answer for it would be a guess.
 *
 * @example
 * answersOf([committed, rejected]).map((a) => a.id); // ['call_1', 'call_2']
 */
export function answersOf(source: ReplySource, who = 'reply'): readonly TurnAnswer[] {
  const answers: readonly TurnAnswer[] = isCallList(source)
    ? source.map((call) => ({ id: call.id, name: call.name, generatedId: call.generatedId, calls: [call] }))
    : source.answers;
  const seen = new Set<string>();
  const unique: TurnAnswer[] = [];
  for (const answer of answers) {
    for (const call of answer.calls) {
      const status: string = call.status;
      if (!isTerminal(call.status)) {
        throw new Error(
          `${who}: call "${call.id}" is ${status}; answer a turn once every call has settled (await reader.settled()).`,
        );
      }
    }
    if (seen.has(answer.id)) continue;
    seen.add(answer.id);
    unique.push(answer);
  }
  return unique;
}

function isCallList(source: ReplySource): source is readonly SettledCall[] {
  return Array.isArray(source);
}

/**
 * The text the model reads for one answer: the call's outcome, or for an unwrapped wrapper, each
 * inner call's outcome under its name.
 *
 * @example
 * answerText(answer); // '{"temperature":18}'
 */
export function answerText(answer: TurnAnswer): string {
  const [only] = answer.calls;
  if (answer.calls.length === 1 && only !== undefined && only.id === answer.id) return outcomeText(only);
  return answer.calls.map((call, index) => `[${index + 1}] ${call.name}: ${outcomeText(call)}`).join('\n');
}

/**
 * Whether an answer reports a failure: any of its calls did not commit.
 *
 * @example
 * answerFailed(answer); // true for a rejected call
 */
export function answerFailed(answer: TurnAnswer): boolean {
  return answer.calls.some((call) => call.status !== 'committed');
}
