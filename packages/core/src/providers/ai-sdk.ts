import { outcomeText } from '../reply/outcome.ts';
import type { SettledCall } from '../record/record.ts';
import {
  STREAM_ERROR,
  outputCutOff,
  createCallAssembler,
  type StreamReaderOptions,
  type TurnReader,
  type StreamGate,
} from '../stream/stream.ts';
import {
  answersOf,
  answerText,
  type ReplyOptions,
  type ReplySource,
  type TurnAnswer,
} from '../reply/turn.ts';

/**
 * A JSON value, as the AI SDK types it.
 *
 * @example
 * const value: JsonValue = { temperatureC: 22, tags: ['sunny'] };
 */
export type JsonValue = null | string | number | boolean | JsonValue[] | { [key: string]: JsonValue };

/**
 * An AI SDK (v5+) `tool-result` part. A denied call is `execution-denied`; other calls that did
 * not commit are `error-text`.
 *
 * @example
 * const part: AiSdkToolResult = { type: 'tool-result', toolCallId: 'c1', toolName: 'charge', output: { type: 'json', value: { ok: true } } };
 */
export interface AiSdkToolResult {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output:
    | { type: 'text'; value: string }
    | { type: 'json'; value: JsonValue }
    | { type: 'error-text'; value: string }
    | { type: 'execution-denied'; reason?: string };
}

/**
 * Answers one settled call as an AI SDK `tool-result` part.
 *
 * @example
 * messages.push({ role: 'tool', content: calls.map(aiSdkToolResult) });
 */
export function aiSdkToolResult(call: SettledCall): AiSdkToolResult {
  return { type: 'tool-result', toolCallId: call.id, toolName: call.name, output: outputOf(call) };
}

function outputOf(call: SettledCall): AiSdkToolResult['output'] {
  if (call.status === 'committed') {
    if (typeof call.output === 'string') return { type: 'text', value: call.output };
    try {
      return { type: 'json', value: JSON.parse(JSON.stringify(call.output ?? null)) as JsonValue };
    } catch {
      return { type: 'text', value: String(call.output) };
    }
  }
  if (call.status === 'cancelled' && call.reason.code === 'approval_denied') {
    return { type: 'execution-denied', reason: call.reason.message };
  }
  return { type: 'error-text', value: outcomeText(call) };
}

/**
 * One AI SDK stream part: a `streamText` `fullStream` part, a provider-level
 * (`LanguageModelV2+`) stream part, or a UI message stream chunk (only the fields the reader uses).
 *
 * @example
 * const part: AiSdkStreamPart = { type: 'tool-input-delta', id: 'call_1', delta: '{"city":' };
 */
export interface AiSdkStreamPart {
  readonly type: string;
  readonly id?: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly text?: string;
  readonly delta?: string;
  readonly inputTextDelta?: string;
  readonly input?: unknown;
  readonly finishReason?: unknown;
  readonly providerMetadata?: unknown;
}

/**
 * A part of the assistant message an AI SDK stream carried, as the AI SDK's `ModelMessage` types it;
 * `providerOptions` carries what the provider attached (a reasoning signature, a thought signature).
 *
 * @example
 * const part: AiSdkAssistantPart = { type: 'tool-call', toolCallId: 'call_1', toolName: 'search', input: { q: 'rates' } };
 */
export type AiSdkAssistantPart =
  | { type: 'text'; text: string; providerOptions?: Record<string, Record<string, JsonValue>> }
  | { type: 'reasoning'; text: string; providerOptions?: Record<string, Record<string, JsonValue>> }
  | {
      type: 'tool-call';
      toolCallId: string;
      toolName: string;
      input: Record<string, unknown>;
      providerOptions?: Record<string, Record<string, JsonValue>>;
    };

/**
 * The assistant message of a streamed step, to put in `messages` before the step's reply.
 *
 * @example
 * const message: AiSdkAssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] };
 */
export interface AiSdkAssistantMessage {
  role: 'assistant';
  content: AiSdkAssistantPart[];
}

/**
 * What {@link readAiSdkStream} returns: a turn reader that also assembles the assistant message.
 *
 * @example
 * const reader: AiSdkStreamReader = readAiSdkStream(gate);
 */
export interface AiSdkStreamReader extends TurnReader<AiSdkStreamPart> {
  /**
   * The assistant message of the step the reader read: its text, reasoning and tool calls in the
   * order they began, each tool call with its input as read, and the provider's metadata as
   * `providerOptions`, as `streamText` builds `response.messages`. Empty text is left out.
   */
  readonly assistantMessage: () => AiSdkAssistantMessage;
}

/**
 * Reads AI SDK stream parts into the gate: `tool-input-start` opens a call, `tool-input-delta`
 * fragments are its arguments, and `tool-input-end` completes it (the UI stream's
 * `toolCallId`/`inputTextDelta`/`tool-input-available` work the same). A `tool-call` part for a
 * call that streamed no input supplies it whole. `finishReason: "length"` on `finish-step` or
 * `finish` rejects every call whose arguments are not whole JSON as `truncated`; a UI stream's
 * `finish-step`, which carries no reason, waits for its `finish`. An `abort` part cancels what is
 * not complete, as `abort()` does.
 *
 * @example
 * const reader = readAiSdkStream(gate);
 * await reader.read(result.fullStream);
 * messages.push(reader.assistantMessage(), ...aiSdkReply(await reader.settled()));
 */
export function readAiSdkStream(gate: StreamGate, options: StreamReaderOptions = {}): AiSdkStreamReader {
  const calls = createCallAssembler(gate, 'ai-sdk', options);
  let stop: string | undefined;
  /** A UI stream's step finished without saying why; its `finish` (or the next step) says. */
  let stepDone = false;
  /** The message's parts in the order they began; tool calls are read from the gate's calls. */
  const parts = new Map<
    string,
    { kind: 'text' | 'reasoning' | 'tool-call'; text: string; name: string; meta: unknown }
  >();

  function note(
    kind: 'text' | 'reasoning' | 'tool-call',
    id: string,
    part: Record<string, unknown>,
    text = '',
  ): void {
    if (calls.ended()) return;
    const key = `${kind}:${id}`;
    let entry = parts.get(key);
    if (entry === undefined) parts.set(key, (entry = { kind, text: '', name: '', meta: undefined }));
    entry.text += text;
    if (typeof part['toolName'] === 'string' && entry.name === '') entry.name = part['toolName'];
    if (isRecord(part['providerMetadata'])) entry.meta = part['providerMetadata'];
  }

  function end(cut?: string): void {
    calls.end(cut);
    stepDone = false;
  }

  function push(part: AiSdkStreamPart): void {
    if (!isRecord(part)) return;
    const rawId = part['id'] ?? part['toolCallId'];
    const id = typeof rawId === 'string' && rawId !== '' ? rawId : undefined;
    const name = typeof part['toolName'] === 'string' ? part['toolName'] : undefined;
    switch (part['type']) {
      case 'text-start':
      case 'text-end':
      case 'reasoning-start':
      case 'reasoning-end':
        if (id !== undefined) note(part['type'].startsWith('text') ? 'text' : 'reasoning', id, part);
        return;
      case 'text-delta':
      case 'reasoning-delta': {
        // fullStream parts carry `text`; UI and provider-level parts carry `delta`.
        const text = part['text'] ?? part['delta'];
        if (id !== undefined && typeof text === 'string')
          note(part['type'] === 'text-delta' ? 'text' : 'reasoning', id, part, text);
        return;
      }
      case 'tool-input-start':
        if (id === undefined) return;
        note('tool-call', id, part);
        calls.start(id, { id, name });
        return;
      case 'tool-input-delta': {
        const delta = part['delta'] ?? part['inputTextDelta'];
        if (id !== undefined && typeof delta === 'string') calls.append(id, delta);
        return;
      }
      case 'tool-input-end':
        // With no input streamed, the tool-call part that follows says what the input was.
        if (id !== undefined && calls.buffered(id) !== '') calls.complete(id);
        return;
      case 'tool-call':
      case 'tool-input-available':
      case 'tool-input-error':
        // These carry the SDK's parsed input. The streamed text stays the source of truth; the
        // parsed input is used only for a call that streamed none. The UI stream has no
        // tool-input-end, so this is also where its calls complete.
        if (id === undefined) return;
        note('tool-call', id, part);
        if (!calls.has(id)) calls.start(id, { id, name });
        if (calls.buffered(id) === '') calls.provide(id, part['input'] === undefined ? '' : part['input']);
        calls.complete(id);
        return;
      case 'start-step':
        if (stepDone) end();
        return;
      case 'finish-step':
      case 'finish': {
        const reason = finishReasonOf(part['finishReason']);
        if (reason === undefined && part['type'] === 'finish-step') {
          stepDone = true;
          return;
        }
        if (calls.ended()) return;
        stop = reason;
        end(reason === 'length' ? outputCutOff('finishReason "length"') : undefined);
        return;
      }
      case 'abort':
        calls.abort('the stream was aborted');
        return;
      case 'error':
        if (calls.ended()) return;
        stop = 'error';
        calls.breakOff(STREAM_ERROR);
        return;
    }
  }

  function assistantMessage(): AiSdkAssistantMessage {
    const content: AiSdkAssistantPart[] = [];
    for (const [key, entry] of parts) {
      const providerOptions = entry.meta as Record<string, Record<string, JsonValue>> | undefined;
      const extra = providerOptions === undefined ? {} : { providerOptions };
      if (entry.kind === 'tool-call') {
        const id = key.slice('tool-call:'.length);
        content.push({
          type: 'tool-call',
          toolCallId: id,
          toolName: entry.name,
          input: calls.input(id),
          ...extra,
        });
      } else if (entry.text !== '') content.push({ type: entry.kind, text: entry.text, ...extra });
    }
    return { role: 'assistant', content };
  }

  return {
    ...calls.reader(
      push,
      () => end('the stream ended before the step finished, with this call unfinished; nothing was run'),
      () => stop,
    ),
    assistantMessage,
  };
}

function finishReasonOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  // Provider-level parts from AI SDK 6 carry { unified, raw }.
  if (isRecord(value) && typeof value['unified'] === 'string') return value['unified'];
  return undefined;
}

/**
 * The `tool` message that answers one assistant turn for the AI SDK: one `tool-result` part per
 * call, in order (denied calls as `execution-denied`, other failures as `error-text`). The
 * optional notice comes as a separate `user` message after it.
 *
 * @example
 * messages.push(...aiSdkReply(await reader.settled()));
 */
export function aiSdkReply(
  source: ReplySource,
  options: ReplyOptions = {},
): ({ role: 'tool'; content: AiSdkToolResult[] } | { role: 'user'; content: string })[] {
  const content = answersOf(source, 'aiSdkReply').map(resultPart);
  const messages: ({ role: 'tool'; content: AiSdkToolResult[] } | { role: 'user'; content: string })[] = [
    { role: 'tool', content },
  ];
  if (options.notice !== undefined) messages.push({ role: 'user', content: options.notice });
  return messages;
}

function resultPart(answer: TurnAnswer): AiSdkToolResult {
  const [only] = answer.calls;
  if (answer.calls.length === 1 && only !== undefined && only.id === answer.id) return aiSdkToolResult(only);
  const failed = answer.calls.some((call) => call.status !== 'committed');
  return {
    type: 'tool-result',
    toolCallId: answer.id,
    toolName: answer.name,
    output: { type: failed ? 'error-text' : 'text', value: answerText(answer) },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
