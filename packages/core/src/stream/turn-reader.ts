import type { SettledCall, ToolCallRecord } from '../record/record.ts';
import type { SettledTurn, TurnAnswer } from '../reply/turn.ts';
import { brokenOff } from './cut-off.ts';
import { inOrder, type StreamTurn } from './stream-turn.ts';

/**
 * A provider stream reader for one assistant turn. Feed it the stream's events; each call appears
 * in the gate as `pending` as soon as its name is known, with a live `preview` of its arguments,
 * and is checked only when the provider says the call is complete. A call the provider cut off
 * at its output limit is rejected as `truncated`.
 *
 * @example
 * const reader = readOpenAIChatStream(gate);
 * await reader.read(await openai.chat.completions.create({ ...request, stream: true }));
 * messages.push(assistantMessage, ...openaiChatReply(await reader.settled()));
 */
export interface TurnReader<E> {
  /** Feeds one stream event. Never throws for model input; unknown events are ignored. */
  readonly push: (event: E) => void;
  /** The stream is over. Calls the provider never finished are closed or truncated, as that provider's stream means. */
  readonly end: () => void;
  /** Feeds every event of a stream, then ends. If the stream throws, it fails the turn (see `fail`) and rethrows. */
  readonly read: (stream: AsyncIterable<E> | Iterable<E>) => Promise<void>;
  /**
   * The stream failed (the network cut it, the SDK threw): every call the provider had not
   * completed is rejected as `truncated`, whole JSON or not, so that nothing of a turn the app may
   * retry has run; the turn ends and `settled()` resolves. Call it from the `catch` of your own
   * loop. `end()` after it does nothing, and it does nothing after `end()`.
   *
   * @example
   * try {
   *   for await (const event of stream) reader.push(event);
   *   reader.end();
   * } catch (error) {
   *   reader.fail(error);
   * }
   */
  readonly fail: (error?: unknown) => void;
  /** Cancels (`user_cancelled`) every call of the turn that is not complete yet; the turn ends. */
  readonly abort: (reason?: string) => void;
  /** The turn's call records as they stand now, in the provider's order. */
  readonly calls: () => ToolCallRecord[];
  /** Resolves when the stream has ended and every call of the turn is terminal. */
  readonly settled: () => Promise<SettledTurn>;
  /**
   * Resolves with the turn's records, in the provider's order, once the stream has ended and each
   * call has ended or waits for a person: never waiting for that person. Answer the model (or tell
   * the user what awaits them) from here, and let the rest of the turn go on without the request.
   *
   * @example
   * await reader.read(stream);
   * const records = await reader.stopped();
   * const waiting = records.filter((call) => call.status === 'awaiting_approval');
   */
  readonly stopped: () => Promise<ToolCallRecord[]>;
  /** The provider's stop reason once it has said it (`tool_calls`, `length`, `max_tokens`, …). */
  readonly stopReason: () => string | undefined;
}

/**
 * The turn's call records as they stand now, in the provider's order (a wrapper's unwrapped calls
 * in their own order, where the wrapper was).
 *
 * @example
 * turnRecords(turn).map((call) => call.status);
 */
export function turnRecords(turn: StreamTurn): ToolCallRecord[] {
  const list: ToolCallRecord[] = [];
  for (const slot of inOrder(turn)) {
    for (const id of slot.callIds) {
      const record = turn.gate.get(id);
      if (record !== undefined) list.push(record);
    }
  }
  return list;
}

/**
 * Resolves once the turn is over and each of its calls is terminal: one answer per call the model
 * made, under the id it gave (or the gate's, when it gave none).
 *
 * @example
 * const { answers } = await settledTurn(turn);
 */
export async function settledTurn(turn: StreamTurn): Promise<SettledTurn> {
  await turn.over;
  const answers: TurnAnswer[] = [];
  for (const slot of inOrder(turn)) {
    const calls: SettledCall[] = await Promise.all(slot.callIds.map((id) => turn.gate.settled(id)));
    const first = calls[0];
    if (first === undefined) continue;
    answers.push({
      id: slot.providerId ?? first.id,
      name: slot.name ?? first.name,
      generatedId: slot.providerId === undefined && slot.generatedId,
      calls,
    });
  }
  return { turn: turn.id, answers };
}

/**
 * Resolves once the turn is over and each of its calls has ended or waits for a person, with the
 * turn's records in the provider's order.
 *
 * @example
 * const records = await stoppedTurn(turn);
 */
export async function stoppedTurn(turn: StreamTurn): Promise<ToolCallRecord[]> {
  await turn.over;
  const stops: Promise<ToolCallRecord>[] = [];
  for (const slot of inOrder(turn)) for (const id of slot.callIds) stops.push(turn.gate.stopped(id));
  return Promise.all(stops);
}

/**
 * The reader a provider's translation of events is handed out as: its own `push`, `end` and stop
 * reason, and the turn's `read`, `fail`, `abort`, `calls`, `settled` and `stopped`.
 *
 * @example
 * return createTurnReader(turn, { breakOff: calls.breakOff, abort: calls.abort }, push, end, () => stopReason);
 */
export function createTurnReader<E>(
  turn: StreamTurn,
  stops: { readonly breakOff: (message: string) => void; readonly abort: (reason?: string) => void },
  push: (event: E) => void,
  end: () => void,
  stopReason: () => string | undefined,
): TurnReader<E> {
  return {
    push,
    end,
    async read(stream) {
      try {
        for await (const event of stream) push(event);
      } catch (error) {
        stops.breakOff(brokenOff(error));
        throw error;
      }
      end();
    },
    fail(error) {
      stops.breakOff(brokenOff(error));
    },
    abort: stops.abort,
    calls: () => turnRecords(turn),
    settled: () => settledTurn(turn),
    stopped: () => stoppedTurn(turn),
    stopReason,
  };
}
