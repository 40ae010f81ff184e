import type { ToolGate } from '../gate.ts';
import { outcomeText } from '../outcome.ts';
import type { SettledCall } from '../record.ts';
import { STREAM_ERROR, outputCutOff, createCallAssembler, type StreamReaderOptions, type TurnReader } from '../stream.ts';
import { answersOf, answerText, type ReplyOptions, type ReplySource, type TurnAnswer } from '../turn.ts';

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
  readonly delta?: string;
  readonly inputTextDelta?: string;
  readonly input?: unknown;
  readonly finishReason?: unknown;
}

/**
 * Reads AI SDK stream parts into the gate: `tool-input-start` opens a call, `tool-input-delta`
 * fragments are its arguments, and `tool-input-end` completes it (the UI stream's
 * `toolCallId`/`inputTextDelta`/`tool-input-available` work the same). A `tool-call` part for a
 * call that streamed no input supplies it whole. `finishReason: "length"` on `finish-step` or
 * `finish` rejects every call whose arguments are not whole JSON as `truncated`.
 *
 * @example
 * const reader = readAiSdkStream(gate);
 * await reader.read(result.fullStream);
 * messages.push({ role: 'assistant', content: toolCallParts }, aiSdkReply(await reader.settled()));
 */
export function readAiSdkStream(gate: ToolGate, options: StreamReaderOptions = {}): TurnReader<AiSdkStreamPart> {
  const calls = createCallAssembler(gate, 'ai-sdk', options);
  let stop: string | undefined;

  function push(part: AiSdkStreamPart): void {
    if (!isRecord(part)) return;
    const rawId = part['id'] ?? part['toolCallId'];
    const id = typeof rawId === 'string' && rawId !== '' ? rawId : undefined;
    const name = typeof part['toolName'] === 'string' ? part['toolName'] : undefined;
    switch (part['type']) {
      case 'tool-input-start':
        if (id !== undefined) calls.start(id, { id, name });
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
        // These carry the SDK's parsed input. The streamed text stays the source of truth; the
        // parsed input is used only for a call that streamed none. The UI stream has no
        // tool-input-end, so this is also where its calls complete.
        if (id === undefined) return;
        if (!calls.has(id)) calls.start(id, { id, name });
        if (calls.buffered(id) === '') calls.provide(id, part['input'] === undefined ? '' : part['input']);
        calls.complete(id);
        return;
      case 'finish-step':
      case 'finish': {
        const reason = finishReasonOf(part['finishReason']);
        stop = reason;
        calls.end(
          reason === 'length'
            ? outputCutOff('finishReason "length"')
            : undefined,
        );
        return;
      }
      case 'error':
        stop = 'error';
        calls.breakOff(STREAM_ERROR);
        return;
    }
  }

  return calls.reader(
    push,
    () => calls.end('the stream ended before the step finished, with this call unfinished; nothing was run'),
    () => stop,
  );
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
  const messages: ({ role: 'tool'; content: AiSdkToolResult[] } | { role: 'user'; content: string })[] = [{ role: 'tool', content }];
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
