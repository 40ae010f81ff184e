import { systemClock, type Clock } from '../call/clock.ts';
import type { ProposalSource } from '../record/record.ts';
import type { StreamGate } from '../gate/stream-gate.ts';
import { PARALLEL_WRAPPER } from '../proposal/parallel-wrapper.ts';
import { cancelOpen, close, openInGate, refuse, truncate } from './hand-off.ts';
import { createPreviews } from './previews.ts';
import { argumentsOf, createSlot, inputAsRead, isWhole, provideWhole, rawOf, type Slot } from './slot.ts';
import { createStreamTurn, finish, inOrder, type StreamTurn } from './stream-turn.ts';
import { createTurnReader, type TurnReader } from './turn-reader.ts';

export { brokenOff, outputCutOff, STREAM_ERROR } from './cut-off.ts';
export type { StreamGate } from '../gate/stream-gate.ts';
export type { TurnReader } from './turn-reader.ts';

/**
 * What every provider stream reader takes.
 *
 * @example
 * const reader = readOpenAIChatStream(gate, { previewIntervalMs: 100, signal: controller.signal });
 */
export interface StreamReaderOptions {
  /** Tag the turn's calls with this id (default: the provider's response or message id). */
  readonly turn?: string;
  /**
   * Publish each call's argument preview at most this often, in milliseconds (default 50). A UI
   * cannot show more frames than that, and each publish copies the parts of the preview that
   * changed. `0` publishes after every fragment.
   */
  readonly previewIntervalMs?: number;
  /** Time for preview batching (default: the system clock); the gate's fake clock works here too. */
  readonly clock?: Clock;
  /** Aborting it cancels every call of the turn that has not been handed to the gate yet. */
  readonly signal?: AbortSignal;
}

/**
 * Opens, previews, closes and truncates one turn's streamed calls in a gate. Provider readers
 * translate their events into these few operations, so every provider gets the same behaviour.
 *
 * @example
 * const calls: CallAssembler = createCallAssembler(gate, 'ai-sdk');
 * calls.start('c1', { id: 'c1', name: 'search' });
 * calls.append('c1', '{"q":"rates"}');
 * calls.complete('c1'); // whole JSON: checked now
 */
export interface CallAssembler {
  /** Creates or updates the call at `key`; it opens in the gate once it has a name. */
  readonly start: (
    key: string,
    init: {
      readonly id?: string | undefined;
      readonly name?: string | undefined;
      readonly position?: number;
    },
  ) => void;
  readonly has: (key: string) => boolean;
  /** The provider's id for the call at `key`, once known. */
  readonly idOf: (key: string) => string | undefined;
  /** The key of the call most recently started or updated. */
  readonly latestKey: () => string | undefined;
  readonly append: (key: string, fragment: string) => void;
  /** The arguments changed in a way only `read` can show; publish its value as the preview (batched). */
  readonly draft: (key: string, read: () => unknown) => void;
  /** The provider gave the whole arguments (a string or an object); they replace the fragments. */
  readonly provide: (key: string, value: unknown) => void;
  /** The fragments so far for a call (empty when none came). */
  readonly buffered: (key: string) => string;
  /** The provider says this call's arguments are done. Whole JSON is checked at once; anything else waits for {@link CallAssembler.end}. */
  readonly complete: (key: string) => void;
  /** The provider cut this one call off (Responses `status: "incomplete"`). */
  readonly cut: (key: string, message: string) => void;
  /** The reader has this call's final arguments (a value or JSON text): hand them to the gate now. */
  readonly closeWith: (key: string, raw: unknown) => void;
  /**
   * The stream says something about this call's arguments that no JSON value can be (a Vertex
   * `partialArgs` path that names no place in one): the gate rejects the call now, as
   * `invalid_shape` with this message, and nothing of it runs.
   */
  readonly refuse: (key: string, message: string) => void;
  /**
   * The call's arguments as the model wrote them, read as far as they go, for replaying the
   * assistant turn: the whole object, or as much of it as arrived; `{}` when that is not an object.
   */
  readonly input: (key: string) => Record<string, unknown>;
  /**
   * The turn is over. With `cut` (the provider stopped at its output limit), a call whose
   * arguments are whole JSON is still checked, since the limit was reached after it; every other
   * call not yet checked is rejected as `truncated` with that message. Without `cut`, all are checked.
   */
  readonly end: (cut?: string) => void;
  /**
   * The stream failed (a transport error, or an `error` event): every call the provider has not
   * completed is rejected as `truncated` with this message, whole JSON or not, so that nothing of
   * a turn the app may retry has already run.
   */
  readonly breakOff: (message: string) => void;
  /** Each call as the model sent it, in order: its id, name and raw arguments (for replaying the assistant turn). */
  readonly sent: () => { readonly id: string; readonly name: string; readonly arguments: unknown }[];
  readonly abort: (reason?: string) => void;
  readonly ended: () => boolean;
  readonly setTurn: (turn: string) => void;
  readonly reader: <E>(
    push: (event: E) => void,
    end: () => void,
    stopReason: () => string | undefined,
  ) => TurnReader<E>;
}

/**
 * How a turn ends before its stream does, each at most once: `abort` cancels every call still
 * open; `breakOff` (the transport failed) truncates every call the provider has not completed.
 * Unlike an output limit, a broken transport says nothing of which calls the provider finished, so
 * they are truncated whole JSON or not: an app that retries the turn must not find half of it
 * already run. `over` ends the turn once, and lets go of the signal: an app may pass one signal
 * for a whole conversation, and a listener left on it per turn would pile up for as long as it lives.
 */
function turnEndings(turn: StreamTurn, signal: AbortSignal | undefined) {
  const onAbort = () => abort('the stream was aborted');
  const over = (settle: () => void) => {
    if (finish(turn, settle)) signal?.removeEventListener('abort', onAbort);
  };
  const abort = (reason = 'the stream was stopped') =>
    over(() => {
      for (const slot of inOrder(turn)) cancelOpen(turn, slot, reason);
    });
  const breakOff = (message: string) =>
    over(() => {
      for (const slot of inOrder(turn)) truncate(turn, slot, message);
    });
  if (signal !== undefined) {
    if (signal.aborted) queueMicrotask(onAbort);
    else signal.addEventListener('abort', onAbort, { once: true });
  }
  return { over, abort, breakOff };
}

/**
 * Creates the shared accumulator that every provider stream reader drives. Its parts share one
 * explicit turn: the slots and their arguments (slot.ts), the previews (previews.ts), handing
 * calls to the gate (hand-off.ts) and the reader it gives out (turn-reader.ts).
 *
 * @example
 * const calls = createCallAssembler(gate, 'anthropic', options);
 * calls.start('1', { id: 'toolu_1', name: 'write_file', position: 1 });
 * calls.append('1', '{"path":"a.md"');
 */
export function createCallAssembler(
  gate: StreamGate,
  source: ProposalSource,
  options: StreamReaderOptions = {},
): CallAssembler {
  const previews = createPreviews(gate, options.clock ?? systemClock, options.previewIntervalMs ?? 50);
  const turn = createStreamTurn(gate, source, previews, options.turn);
  const { slots } = turn;
  const { maxArgumentChars, maxDepth } = gate.limits;
  let latest: Slot | undefined;
  // `append` runs once per streamed fragment: the last call appended to is kept at hand.
  let lastKey: string | undefined;
  let lastSlot: Slot | undefined;

  const unclosed = (key: string): Slot | undefined => {
    const slot = slots.get(key);
    return slot === undefined || slot.phase === 'closed' ? undefined : slot;
  };
  const { over, abort, breakOff } = turnEndings(turn, options.signal);

  function start(
    key: string,
    init: {
      readonly id?: string | undefined;
      readonly name?: string | undefined;
      readonly position?: number;
    },
  ): void {
    if (turn.finished) return;
    let slot = slots.get(key);
    if (slot === undefined) {
      slot = createSlot(key, slots.size, init.position ?? slots.size, maxDepth);
      slots.set(key, slot);
    }
    latest = slot;
    if (init.position !== undefined) slot.position = init.position;
    if (slot.providerId === undefined && typeof init.id === 'string' && init.id !== '')
      slot.providerId = init.id;
    if (slot.name === undefined && typeof init.name === 'string' && init.name !== '') slot.name = init.name;
    if (slot.phase === 'naming' && slot.name !== undefined && slot.name !== PARALLEL_WRAPPER) {
      openInGate(turn, slot, slot.name);
      previews.publish(slot);
    }
  }

  function append(key: string, fragment: string): void {
    const slot = key === lastKey && lastSlot !== undefined ? lastSlot : slots.get(key);
    if (slot === undefined || fragment === '' || (slot.phase !== 'open' && slot.phase !== 'naming')) return;
    lastKey = key;
    lastSlot = slot;
    slot.parts.push(fragment);
    slot.length += fragment.length;
    if (slot.length > maxArgumentChars) {
      // Already over the limit: hand it to the gate now (it rejects `too_large` on the length
      // alone) rather than buffer the rest of an argument that can never be accepted.
      close(turn, slot);
      return;
    }
    if (slot.timer === undefined) previews.schedule(slot);
  }

  return {
    start,
    append,
    has: (key) => slots.has(key),
    idOf: (key) => slots.get(key)?.providerId,
    latestKey: () => latest?.key,
    draft(key, read) {
      const slot = slots.get(key);
      if (slot === undefined) return;
      slot.read = read;
      previews.schedule(slot);
    },
    provide(key, value) {
      const slot = unclosed(key);
      if (slot !== undefined) provideWhole(slot, value, maxDepth);
    },
    buffered(key) {
      const slot = slots.get(key);
      return slot === undefined ? '' : rawOf(slot);
    },
    complete(key) {
      const slot = unclosed(key);
      if (slot === undefined) return;
      if (isWhole(slot)) close(turn, slot);
      else {
        previews.clear(slot);
        slot.phase = 'ended';
      }
    },
    cut(key, message) {
      const slot = slots.get(key);
      if (slot !== undefined) truncate(turn, slot, message);
    },
    closeWith(key, raw) {
      const slot = unclosed(key);
      if (slot === undefined) return;
      slot.whole = { value: raw };
      close(turn, slot);
    },
    refuse(key, message) {
      const slot = unclosed(key);
      if (slot !== undefined) refuse(turn, slot, { code: 'invalid_shape', message });
    },
    input(key) {
      const slot = slots.get(key);
      return slot === undefined ? {} : inputAsRead(argumentsOf(slot), maxDepth);
    },
    sent: () =>
      inOrder(turn).map((slot) => ({
        id: slot.providerId ?? slot.callIds[0] ?? '',
        name: slot.name ?? '',
        arguments: argumentsOf(slot),
      })),
    end: (cut) =>
      over(() => {
        for (const slot of inOrder(turn)) {
          if (cut === undefined || isWhole(slot)) close(turn, slot);
          else truncate(turn, slot, cut);
        }
      }),
    breakOff,
    abort,
    ended: () => turn.finished,
    setTurn(value) {
      if (!turn.idFixed && slots.size === 0) {
        turn.id = value;
        turn.idFixed = true;
      }
    },
    reader: (push, end, stopReason) => createTurnReader(turn, { breakOff, abort }, push, end, stopReason),
  };
}
