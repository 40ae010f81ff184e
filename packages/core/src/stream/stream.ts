import { systemClock, type Clock } from '../call/clock.ts';
import type { ToolGate } from '../gate/gate.ts';
import { PARALLEL_WRAPPER, readParallelWrapper } from '../proposal/parallel-wrapper.ts';
import { createPartialJson, type PartialJson } from './partial-json.ts';
import type { ProposalSource, SettledCall, ToolCallRecord } from '../call/record.ts';
import type { SettledTurn, TurnAnswer } from '../reply/turn.ts';


/**
 * What a stream reader needs of a gate: a browser gate has it all, and so does a server gate's
 * `turn(...)`, which reads a model's stream into the server's ledger.
 *
 * @example
 * const reader = readOpenAIChatStream(serverGate.turn({ session, principal }));
 */
export type StreamGate = Pick<ToolGate, 'propose' | 'settled' | 'get' | 'cancel' | 'stream' | 'tools' | 'limits'>;

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
  /** The provider's stop reason once it has said it (`tool_calls`, `length`, `max_tokens`, …). */
  readonly stopReason: () => string | undefined;
}

/**
 * Where a streamed call is: waiting for its name; open (arguments arriving); ended (the provider
 * said the arguments are done but they are not whole JSON, so the turn's stop reason decides
 * between `truncated` and the gate's own reason); closed (handed to the gate).
 */
type Phase = 'naming' | 'open' | 'ended' | 'closed';

interface Slot {
  readonly key: string;
  readonly order: number;
  position: number;
  providerId: string | undefined;
  name: string | undefined;
  phase: Phase;
  /** The argument fragments so far (joined when the call closes: one copy, not one per fragment). */
  parts: string[];
  length: number;
  /** How many of `parts` the previewer has read: it reads them when a preview or a decision needs it. */
  parsed: number;
  json: PartialJson | undefined;
  /** Arguments the provider gave whole (a final string, or an object), which win over the fragments. */
  whole: { readonly value: unknown } | undefined;
  /** The gate's ids for this call: one, or the unwrapped calls of a wrapper. */
  callIds: string[];
  generatedId: boolean;
  /** Reads the preview when the arguments are not JSON text (Vertex builds them by path). */
  read: (() => unknown) | undefined;
  lastPreviewAt: number;
  lastPreview: unknown;
  timer: unknown;
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
  readonly start: (key: string, init: { readonly id?: string | undefined; readonly name?: string | undefined; readonly position?: number }) => void;
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
  readonly reader: <E>(push: (event: E) => void, end: () => void, stopReason: () => string | undefined) => TurnReader<E>;
}

/**
 * Why a call the model was still writing is refused when the provider says its output limit cut
 * the turn short; `signal` is how that provider said it, e.g. `finish_reason "length"`.
 *
 * @example
 * calls.end(finish === 'length' ? outputCutOff(`finish_reason "${finish}"`) : undefined);
 */
export function outputCutOff(signal: string): string {
  return `the model's output was cut off (${signal}) before this call's arguments were complete; nothing was run`;
}

/**
 * Why the calls a provider had not finished are refused when its stream reports an error.
 *
 * @example
 * calls.breakOff(STREAM_ERROR);
 */
export const STREAM_ERROR = 'the stream reported an error before this call was complete; nothing was run';

/**
 * Why the calls a provider had not finished are refused when the stream itself fails.
 *
 * @example
 * brokenOff(new Error('socket hang up'));
 * // 'the stream broke off before this call was complete (socket hang up); nothing was run'
 */
export function brokenOff(error?: unknown): string {
  const why = error === undefined ? '' : ` (${errorText(error)})`;
  return `the stream broke off before this call was complete${why}; nothing was run`;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    // An SDK may reject with a plain object; `undefined`, functions and symbols have no JSON.
    return JSON.stringify(error) ?? typeof error;
  } catch {
    return typeof error;
  }
}

/**
 * A tool call's arguments as the model wrote them, for replaying its turn: JSON text is read as
 * far as it goes (the whole object, or what arrived of a call that was cut off), and anything that
 * is not an object becomes `{}`, which every provider accepts as a call's input.
 *
 * @example
 * inputAsRead('{"path":"a.md","content":"Hel', 64); // { path: 'a.md', content: 'Hel' }
 */
function inputAsRead(raw: unknown, maxDepth: number): Record<string, unknown> {
  let value = raw;
  if (typeof raw === 'string') {
    const json = createPartialJson({ maxDepth });
    json.push(raw);
    value = json.preview();
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * Creates the shared accumulator that every provider stream reader drives.
 *
 * @example
 * const calls = createCallAssembler(gate, 'anthropic', options);
 * calls.start('1', { id: 'toolu_1', name: 'write_file', position: 1 });
 * calls.append('1', '{"path":"a.md"');
 */
export function createCallAssembler(gate: StreamGate, source: ProposalSource, options: StreamReaderOptions = {}): CallAssembler {
  const clock = options.clock ?? systemClock;
  const interval = options.previewIntervalMs ?? 50;
  const { maxArgumentChars, maxDepth } = gate.limits;
  const slots = new Map<string, Slot>();
  let turn = options.turn;
  let turnFixed = options.turn !== undefined;
  let finished = false;
  let latest: Slot | undefined;
  let lastKey: string | undefined;
  let lastSlot: Slot | undefined;
  let resolveEnded!: () => void;
  const endedPromise = new Promise<void>((resolve) => {
    resolveEnded = resolve;
  });

  const signal = options.signal;
  if (signal !== undefined) {
    if (signal.aborted) queueMicrotask(() => abort('the stream was aborted'));
    else signal.addEventListener('abort', () => abort('the stream was aborted'), { once: true });
  }

  function start(key: string, init: { readonly id?: string | undefined; readonly name?: string | undefined; readonly position?: number }): void {
    if (finished) return;
    let slot = slots.get(key);
    if (slot === undefined) {
      slot = {
        key,
        order: slots.size,
        position: init.position ?? slots.size,
        providerId: undefined,
        name: undefined,
        phase: 'naming',
        parts: [],
        length: 0,
        parsed: 0,
        json: createPartialJson({ maxDepth }),
        whole: undefined,
        callIds: [],
        generatedId: false,
        read: undefined,
        lastPreviewAt: -Infinity,
        lastPreview: undefined,
        timer: undefined,
      };
      slots.set(key, slot);
    }
    latest = slot;
    if (init.position !== undefined) slot.position = init.position;
    if (slot.providerId === undefined && typeof init.id === 'string' && init.id !== '') slot.providerId = init.id;
    if (slot.name === undefined && typeof init.name === 'string' && init.name !== '') slot.name = init.name;
    if (slot.phase === 'naming' && slot.name !== undefined && slot.name !== PARALLEL_WRAPPER) {
      openInGate(slot, slot.name);
      preview(slot);
    }
  }

  function openInGate(slot: Slot, name: string): string {
    const record = gate.stream.open({
      ...(slot.providerId === undefined ? {} : { id: slot.providerId }),
      name,
      source,
      ...(turn === undefined ? {} : { turn }),
    });
    slot.callIds = [record.id];
    slot.generatedId = record.generatedId;
    if (slot.phase === 'naming') slot.phase = 'open';
    return record.id;
  }

  function append(key: string, fragment: string): void {
    // This runs once per streamed fragment: the last call appended to is kept at hand.
    const slot = key === lastKey && lastSlot !== undefined ? lastSlot : slots.get(key);
    if (slot === undefined || fragment === '' || (slot.phase !== 'open' && slot.phase !== 'naming')) return;
    lastKey = key;
    lastSlot = slot;
    slot.parts.push(fragment);
    slot.length += fragment.length;
    if (slot.length > maxArgumentChars) {
      // Already over the limit: hand it to the gate now (it rejects `too_large` on the length
      // alone) rather than buffer the rest of an argument that can never be accepted.
      close(slot);
      return;
    }
    if (slot.timer === undefined) schedulePreview(slot);
  }

  /**
   * The previewer, having read every fragment so far. Fragments are read in one batch per preview
   * (or decision), not one by one, so a burst of tiny deltas costs one pass over their text.
   */
  function readJson(slot: Slot): PartialJson | undefined {
    const json = slot.json;
    if (json !== undefined && slot.parsed < slot.parts.length) {
      const { parts, parsed } = slot;
      let text = parts[parsed] as string;
      if (parts.length - parsed > 1) {
        // The batch replaces its fragments, so a long stream keeps a few strings alive, not thousands.
        text = parts.slice(parsed).join('');
        parts.length = parsed;
        parts.push(text);
      }
      json.push(text);
      slot.parsed = parts.length;
    }
    return json;
  }

  function rawOf(slot: Slot): string {
    if (slot.parts.length > 1) {
      readJson(slot);
      slot.parts = [slot.parts.join('')];
      slot.parsed = 1;
    }
    return slot.parts[0] ?? '';
  }

  function draft(key: string, read: () => unknown): void {
    const slot = slots.get(key);
    if (slot === undefined) return;
    slot.read = read;
    schedulePreview(slot);
  }

  function schedulePreview(slot: Slot): void {
    // A publish is already due: it will read the preview as it stands then.
    if (slot.timer !== undefined || slot.phase !== 'open') return;
    const now = clock.now();
    const wait = interval - (now - slot.lastPreviewAt);
    if (wait <= 0) preview(slot, now);
    else {
      slot.timer = clock.setTimeout(() => {
        slot.timer = undefined;
        preview(slot);
      }, wait);
    }
  }

  function preview(slot: Slot, now = clock.now()): void {
    const id = slot.callIds[0];
    if (slot.phase !== 'open' || id === undefined) return;
    const json = readJson(slot);
    if (slot.read === undefined && (json === undefined || json.state() === 'empty')) return;
    slot.lastPreviewAt = now;
    const value = slot.read === undefined ? json?.preview() : slot.read();
    if (value === slot.lastPreview) return;
    slot.lastPreview = value;
    gate.stream.preview(id, value);
  }

  function provide(key: string, value: unknown): void {
    const slot = slots.get(key);
    if (slot === undefined || slot.phase === 'closed') return;
    slot.whole = { value };
    if (typeof value === 'string' && value !== rawOf(slot)) {
      // The provider's final text wins over the fragments; read it once to know whether it is whole.
      slot.parts = [value];
      slot.length = value.length;
      slot.parsed = 0;
      slot.json = createPartialJson({ maxDepth });
    }
  }

  /** Whole JSON cannot have been cut by an output limit: its closing bracket was written. */
  function isWhole(slot: Slot): boolean {
    const value = slot.whole?.value;
    if (value !== undefined && typeof value !== 'string') return true;
    return readJson(slot)?.state() === 'complete';
  }

  function complete(key: string): void {
    const slot = slots.get(key);
    if (slot === undefined || slot.phase === 'closed') return;
    if (isWhole(slot)) close(slot);
    else {
      clearTimer(slot);
      slot.phase = 'ended';
    }
  }

  function clearTimer(slot: Slot): void {
    if (slot.timer !== undefined) {
      clock.clearTimeout(slot.timer);
      slot.timer = undefined;
    }
  }

  function close(slot: Slot, raw: unknown = slot.whole === undefined ? rawOf(slot) : slot.whole.value): void {
    if (slot.phase === 'closed') return;
    clearTimer(slot);
    const name = slot.name;
    slot.phase = 'closed';
    slot.json = undefined;
    if (name === undefined) {
      // No name ever came: the gate rejects it (`invalid_shape`), so the id is still answered.
      const record = gate.propose({ id: slot.providerId, arguments: raw }, turn === undefined ? {} : { turn });
      slot.callIds = [record.id];
      slot.generatedId = record.generatedId;
      return;
    }
    if (name === PARALLEL_WRAPPER && unwrap(slot, raw)) return;
    const id = slot.callIds[0] ?? openInGate(slot, name);
    gate.stream.close(id, raw);
  }

  /** Proposes the calls inside a wrapper, when every tool they name has opted in. */
  function unwrap(slot: Slot, raw: unknown): boolean {
    const read = readParallelWrapper(raw, gate.limits);
    if (!read.ok) return false;
    const tools = new Map(gate.tools.map((tool) => [tool.name, tool]));
    if (!read.calls.every((call) => tools.get(call.name)?.repair?.includes('parallel_wrapper') === true)) return false;
    const wrapperId = slot.providerId ?? `${PARALLEL_WRAPPER}@${slot.position}`;
    slot.providerId = wrapperId;
    slot.callIds = read.calls.map((call, index) => {
      const repairs = [
        {
          kind: 'parallel_wrapper',
          path: '',
          message: `unwrapped call ${index + 1} of ${read.calls.length} from the ${PARALLEL_WRAPPER} call ${wrapperId}`,
        },
      ];
      const record = gate.propose(
        { id: `${wrapperId}#${index + 1}`, name: call.name, arguments: call.arguments },
        turn === undefined ? { repairs } : { turn, repairs },
      );
      return record.id;
    });
    return true;
  }

  function truncate(slot: Slot, message: string): void {
    if (slot.phase === 'closed') return;
    clearTimer(slot);
    const id = slot.callIds[0] ?? openInGate(slot, slot.name ?? '');
    slot.phase = 'closed';
    slot.json = undefined;
    gate.stream.truncate(id, message);
  }

  function closeWith(key: string, raw: unknown): void {
    const slot = slots.get(key);
    if (slot === undefined || slot.phase === 'closed') return;
    slot.whole = { value: raw };
    close(slot);
  }

  function refuse(key: string, message: string): void {
    const slot = slots.get(key);
    if (slot === undefined || slot.phase === 'closed') return;
    clearTimer(slot);
    const id = slot.callIds[0] ?? openInGate(slot, slot.name ?? '');
    slot.phase = 'closed';
    slot.json = undefined;
    gate.stream.refuse(id, { code: 'invalid_shape', message });
  }

  function input(key: string): Record<string, unknown> {
    const slot = slots.get(key);
    if (slot === undefined) return {};
    return inputAsRead(slot.whole === undefined ? rawOf(slot) : slot.whole.value, maxDepth);
  }

  function inOrder(): Slot[] {
    return [...slots.values()].sort((a, b) => a.position - b.position || a.order - b.order);
  }

  function end(cut?: string): void {
    if (finished) return;
    finished = true;
    for (const slot of inOrder()) {
      if (cut === undefined || isWhole(slot)) close(slot);
      else truncate(slot, cut);
    }
    resolveEnded();
  }

  /**
   * The transport failed. Unlike an output limit, nothing says which calls the provider finished,
   * so every call it has not completed is truncated, whole JSON or not: an app that retries the
   * turn must not find half of it already run.
   */
  function breakOff(message: string): void {
    if (finished) return;
    finished = true;
    for (const slot of inOrder()) truncate(slot, message);
    resolveEnded();
  }

  function abort(reason = 'the stream was stopped'): void {
    if (finished) return;
    finished = true;
    for (const slot of inOrder()) {
      if (slot.phase === 'closed') continue;
      clearTimer(slot);
      const id = slot.callIds[0] ?? openInGate(slot, slot.name ?? '');
      slot.phase = 'closed';
      slot.json = undefined;
      gate.cancel(id, reason);
    }
    resolveEnded();
  }

  function records(): ToolCallRecord[] {
    const list: ToolCallRecord[] = [];
    for (const slot of inOrder()) {
      for (const id of slot.callIds) {
        const record = gate.get(id);
        if (record !== undefined) list.push(record);
      }
    }
    return list;
  }

  async function settled(): Promise<SettledTurn> {
    await endedPromise;
    const answers: TurnAnswer[] = [];
    for (const slot of inOrder()) {
      const calls: SettledCall[] = await Promise.all(slot.callIds.map((id) => gate.settled(id)));
      const first = calls[0];
      if (first === undefined) continue;
      answers.push({
        id: slot.providerId ?? first.id,
        name: slot.name ?? first.name,
        generatedId: slot.providerId === undefined && slot.generatedId,
        calls,
      });
    }
    return { turn, answers };
  }

  function reader<E>(push: (event: E) => void, endStream: () => void, stopReason: () => string | undefined): TurnReader<E> {
    return {
      push,
      end: endStream,
      async read(stream) {
        try {
          for await (const event of stream) push(event);
        } catch (error) {
          breakOff(brokenOff(error));
          throw error;
        }
        endStream();
      },
      fail(error) {
        breakOff(brokenOff(error));
      },
      abort,
      calls: records,
      settled,
      stopReason,
    };
  }

  return {
    start,
    has: (key) => slots.has(key),
    idOf: (key) => slots.get(key)?.providerId,
    latestKey: () => latest?.key,
    cut(key, message) {
      const slot = slots.get(key);
      if (slot !== undefined) truncate(slot, message);
    },
    closeWith,
    refuse,
    input,
    sent: () =>
      inOrder().map((slot) => ({
        id: slot.providerId ?? slot.callIds[0] ?? '',
        name: slot.name ?? '',
        arguments: slot.whole === undefined ? rawOf(slot) : slot.whole.value,
      })),
    append,
    draft,
    provide,
    buffered(key) {
      const slot = slots.get(key);
      return slot === undefined ? '' : rawOf(slot);
    },
    complete,
    end,
    breakOff,
    abort,
    ended: () => finished,
    setTurn(value) {
      if (!turnFixed && slots.size === 0) {
        turn = value;
        turnFixed = true;
      }
    },
    reader,
  };
}
