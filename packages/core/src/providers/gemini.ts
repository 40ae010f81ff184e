import { checkToolNames, toolJsonSchema } from '../tool/json-schema-export.ts';
import { outcomeText } from '../reply/outcome.ts';
import type { SettledCall } from '../record/record.ts';
import { copyValue } from '../proposal/value-walk.ts';
import {
  outputCutOff,
  createCallAssembler,
  type StreamReaderOptions,
  type TurnReader,
  type StreamGate,
} from '../stream/stream.ts';
import type { ToolDefinition } from '../tool/tool.ts';
import {
  answerFailed,
  answersOf,
  answerText,
  type ReplyOptions,
  type ReplySource,
  type TurnAnswer,
} from '../reply/turn.ts';
import { createPartialArgs, type PartialArgs } from './gemini-partial-args.ts';

/**
 * A Gemini `functionResponse` part. `response` is `{ output }` on success and `{ error }` otherwise
 * (the API has no error flag). `id` is sent back only when the model sent one.
 *
 * @example
 * const part: GeminiToolResult = { functionResponse: { name: 'get_weather', response: { output: { temp: 21 } } } };
 */
export interface GeminiToolResult {
  functionResponse: {
    name: string;
    id?: string;
    response: { output: unknown } | { error: string };
  };
}

/**
 * Answers one settled call as a Gemini `functionResponse` part.
 *
 * @example
 * contents.push({ role: 'user', parts: calls.map(geminiToolResult) });
 */
export function geminiToolResult(call: SettledCall): GeminiToolResult {
  const response =
    call.status === 'committed' ? { output: call.output ?? null } : { error: outcomeText(call) };
  return {
    functionResponse: call.generatedId
      ? { name: call.name, response }
      : { name: call.name, id: call.id, response },
  };
}

/**
 * Gemini's rule for function names.
 *
 * @example
 * GEMINI_TOOL_NAME.test('files.read'); // true
 */
export const GEMINI_TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;

/**
 * One `GenerateContentResponse` chunk of `streamGenerateContent` (only the fields the reader uses).
 *
 * @example
 * const chunk: GeminiChunk = { responseId: 'r1', candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] } }] };
 */
export interface GeminiChunk {
  readonly responseId?: string;
  readonly candidates?: readonly {
    readonly index?: number;
    readonly content?: { readonly parts?: readonly unknown[] } | null;
    readonly finishReason?: string | null;
  }[];
}

/** `finishReason` values that mean the output was cut before the model finished. */
const CUT = new Set(['MAX_TOKENS']);

/**
 * One part of a Gemini `Content`: text (a thought when `thought` is set), a `functionCall`, or any
 * other part, with its `thoughtSignature` when the model sent one.
 *
 * @example
 * const part: GeminiPart = { functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'EpQC' };
 */
export interface GeminiPart {
  [key: string]: unknown;
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name: string; id?: string; args?: Record<string, unknown> };
}

/**
 * The model's turn as a Gemini `Content`, to put in `contents` before the turn's reply.
 *
 * @example
 * const content: GeminiModelContent = { role: 'model', parts: [{ text: 'Checking.' }] };
 */
export interface GeminiModelContent {
  role: 'model';
  parts: GeminiPart[];
}

/**
 * What {@link readGeminiStream} returns: a turn reader that also assembles the model's content.
 *
 * @example
 * const reader: GeminiStreamReader = readGeminiStream(gate);
 */
export interface GeminiStreamReader extends TurnReader<GeminiChunk> {
  /**
   * The model's content the stream carried, part by part: every part as it came, with its thought
   * signature (Gemini wants them back unchanged), text deltas without one joined into one part,
   * and each Vertex streamed call as one `functionCall` with the arguments its `partialArgs` built.
   */
  readonly modelContent: () => GeminiModelContent;
}

/** The Vertex call whose arguments are streaming, and the arguments its partialArgs built. */
interface Streaming {
  readonly key: string;
  readonly args: PartialArgs;
  /** The arguments went to the gate early (too large, too deep, unreadable): later entries are ignored. */
  stopped: boolean;
}

/**
 * The model's parts as a stream brings them: each part kept as it came, text deltas without a
 * thought signature joined into one part, and a streamed call kept with its arguments so far, built
 * into one `functionCall` when the content is asked for.
 */
function modelContentOf() {
  const parts: ({ part: GeminiPart; joinable: boolean } | { part: GeminiPart; streamed: Streaming })[] = [];
  return {
    /** A whole `functionCall` part. */
    call: (part: GeminiPart): void => {
      parts.push({ part, joinable: false });
    },
    /** The opening part of a call whose arguments stream (Vertex). */
    streamed: (part: GeminiPart, streamed: Streaming): void => {
      parts.push({ part, streamed });
    },
    /** Any other part: text, a thought, inline data. */
    keep: (part: Record<string, unknown>): void => {
      const text = part['text'];
      const joinable =
        typeof text === 'string' && Object.keys(part).every((key) => key === 'text' || key === 'thought');
      const last = parts[parts.length - 1];
      if (
        joinable &&
        last !== undefined &&
        'joinable' in last &&
        last.joinable &&
        last.part.thought === part['thought']
      ) {
        last.part = { ...last.part, text: `${last.part.text ?? ''}${text}` };
        return;
      }
      parts.push({ part: { ...part }, joinable });
    },
    build: (): GeminiModelContent => ({
      role: 'model',
      parts: parts.map((entry) => {
        if (!('streamed' in entry)) return entry.part;
        const {
          willContinue: _continues,
          partialArgs: _partial,
          ...call
        } = entry.part.functionCall as Record<string, unknown>;
        const functionCall = { ...call, args: structuredClone(entry.streamed.args.value) } as NonNullable<
          GeminiPart['functionCall']
        >;
        return { ...entry.part, functionCall };
      }),
    }),
  };
}

/**
 * Reads a Gemini (or Vertex AI) stream into the gate. A whole `functionCall` part is checked as
 * it arrives (its arguments are built by the server, so they cannot be half-written). With Vertex's
 * `streamFunctionCallArguments`, a call opens with `{ name, willContinue: true }`, its `partialArgs`
 * are applied by JSON path, and the empty `functionCall` closes it. A `partialArgs` entry that no
 * JSON object can be (a path that is not one, that skips array elements or steps into a value of
 * another kind) rejects the call as `invalid_shape`, and arguments that pass the gate's limits
 * are rejected as `too_large` or `too_deep` at once; previews never pass those limits.
 * `finishReason: "MAX_TOKENS"` rejects every call still open as `truncated`. Calls without an id
 * get one from the gate, and the reply never sends it back. `MALFORMED_FUNCTION_CALL` and the
 * other finish reasons are in `stopReason()`.
 *
 * @example
 * const reader = readGeminiStream(gate);
 * await reader.read(await ai.models.generateContentStream({ model, contents, config }));
 * contents.push(reader.modelContent(), geminiReply(await reader.settled()));
 */
export function readGeminiStream(
  gate: StreamGate,
  options: StreamReaderOptions & { readonly candidate?: number } = {},
): GeminiStreamReader {
  const calls = createCallAssembler(gate, 'gemini', options);
  const wanted = options.candidate ?? 0;
  let count = 0;
  let streaming: Streaming | undefined;
  let stop: string | undefined;
  const model = modelContentOf();

  function onFunctionCall(part: Record<string, unknown>, call: Record<string, unknown>): void {
    const name = typeof call['name'] === 'string' && call['name'] !== '' ? call['name'] : undefined;
    const id = typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : undefined;
    const partial = call['partialArgs'];
    if (name !== undefined) {
      // A call that the next one interrupts was never closed: it is not checked as complete.
      if (streaming !== undefined && !streaming.stopped) calls.complete(streaming.key);
      const key = `p${++count}`;
      calls.start(key, { id, name });
      if (call['willContinue'] === true) {
        streaming = open(key, call['args']);
        model.streamed(part, streaming);
        if (Array.isArray(partial)) applyPartial(streaming, partial);
        return;
      }
      streaming = undefined;
      model.call(part);
      calls.provide(
        key,
        isRecord(call['args']) ? call['args'] : call['args'] === undefined ? {} : call['args'],
      );
      calls.complete(key);
      return;
    }
    if (streaming === undefined) return;
    if (Array.isArray(partial)) applyPartial(streaming, partial);
    else if (call['willContinue'] !== true) {
      // The empty functionCall ends the streamed call.
      finish(streaming);
      streaming = undefined;
    }
  }

  /** Starts building a streamed call from the `args` its opening part carried, if they are within the limits. */
  function open(key: string, args: unknown): Streaming {
    const initial = args === undefined ? { kind: 'ok' as const, value: {} } : copyValue(args, gate.limits);
    if (initial.kind === 'ok' && isRecord(initial.value))
      return { key, args: createPartialArgs(initial.value, gate.limits), stopped: false };
    // The gate says what is wrong with them, in its own words.
    calls.closeWith(key, args);
    return { key, args: createPartialArgs({}, gate.limits), stopped: true };
  }

  function finish(target: Streaming): void {
    if (target.stopped) return;
    calls.provide(target.key, target.args.value);
    calls.complete(target.key);
  }

  function applyPartial(target: Streaming, partials: readonly unknown[]): void {
    for (const partial of partials) {
      if (target.stopped) return;
      const step = target.args.apply(partial);
      switch (step.kind) {
        case 'ok':
          continue;
        case 'too_large':
          target.stopped = true;
          calls.closeWith(target.key, step.text);
          return;
        case 'too_deep':
          target.stopped = true;
          calls.closeWith(target.key, target.args.value);
          return;
        case 'unreadable':
          target.stopped = true;
          calls.refuse(target.key, step.message);
          return;
      }
    }
    calls.draft(target.key, () => structuredClone(target.args.value));
  }

  function push(chunk: GeminiChunk): void {
    if (!isRecord(chunk)) return;
    if (typeof chunk['responseId'] === 'string') calls.setTurn(chunk['responseId']);
    const candidates = chunk['candidates'];
    if (!Array.isArray(candidates)) return;
    for (const candidate of candidates as unknown[]) {
      if (
        !isRecord(candidate) ||
        (typeof candidate['index'] === 'number' ? candidate['index'] : 0) !== wanted
      )
        continue;
      const content = candidate['content'];
      const received = isRecord(content) ? content['parts'] : undefined;
      if (Array.isArray(received) && !calls.ended()) {
        for (const part of received as unknown[]) {
          if (!isRecord(part)) continue;
          if (isRecord(part['functionCall'])) onFunctionCall(part, part['functionCall']);
          else model.keep(part);
        }
      }
      const finishReason = candidate['finishReason'];
      if (
        typeof finishReason === 'string' &&
        finishReason !== '' &&
        finishReason !== 'FINISH_REASON_UNSPECIFIED'
      ) {
        stop = finishReason;
        calls.end(CUT.has(finishReason) ? outputCutOff(`finishReason "${finishReason}"`) : undefined);
      }
    }
  }

  return {
    ...calls.reader(
      push,
      () =>
        calls.end(
          streaming === undefined
            ? undefined
            : 'the stream ended while this call was still streaming; nothing was run',
        ),
      () => stop,
    ),
    modelContent: model.build,
  };
}

/**
 * The user content that answers one model turn for Gemini: one `functionResponse` part per call,
 * in call order, `{ output }` for a committed call and `{ error }` for every other; `id` is echoed
 * only when the model sent one. The optional notice follows as a text part. Replay the model's
 * content (with its thought signatures) unchanged before it.
 *
 * @example
 * contents.push(response.candidates[0].content, geminiReply(await reader.settled()));
 */
export function geminiReply(
  source: ReplySource,
  options: ReplyOptions = {},
): { role: 'user'; parts: (GeminiToolResult | { text: string })[] } {
  const parts: (GeminiToolResult | { text: string })[] = answersOf(source, 'geminiReply').map(
    functionResponse,
  );
  if (options.notice !== undefined) parts.push({ text: options.notice });
  return { role: 'user', parts };
}

function functionResponse(answer: TurnAnswer): GeminiToolResult {
  const [only] = answer.calls;
  let response: GeminiToolResult['functionResponse']['response'];
  if (answerFailed(answer)) response = { error: answerText(answer) };
  else if (answer.calls.length === 1 && only?.status === 'committed')
    response = { output: only.output ?? null };
  else response = { output: answerText(answer) };
  return {
    functionResponse: answer.generatedId
      ? { name: answer.name, response }
      : { name: answer.name, id: answer.id, response },
  };
}

/**
 * A Gemini function declaration, with the parameters as JSON Schema.
 *
 * @example
 * const declaration: GeminiFunctionDeclaration = { name: 'search', parametersJsonSchema: { type: 'object' } };
 */
export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema: Record<string, unknown>;
}

/**
 * The gate's tools as Gemini `functionDeclarations` (put them in `tools: [{ functionDeclarations }]`).
 * Names must start with a letter or `_` and use letters, digits, `_ . : -`, up to 64 characters.
 *
 * @example
 * const config = { tools: [{ functionDeclarations: geminiFunctionDeclarations(gate.tools) }] };
 */
export function geminiFunctionDeclarations(tools: readonly ToolDefinition[]): GeminiFunctionDeclaration[] {
  checkToolNames(tools, GEMINI_TOOL_NAME, 'geminiFunctionDeclarations', 'Gemini');
  return tools.map((tool) => {
    const parametersJsonSchema = toolJsonSchema(tool, 'geminiFunctionDeclarations');
    return tool.description === undefined
      ? { name: tool.name, parametersJsonSchema }
      : { name: tool.name, description: tool.description, parametersJsonSchema };
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
