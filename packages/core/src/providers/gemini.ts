import type { ToolGate } from '../gate.ts';
import { checkToolNames, toolJsonSchema } from '../json-schema-export.ts';
import { outcomeText } from '../outcome.ts';
import type { SettledCall } from '../record.ts';
import { outputCutOff, createCallAssembler, type StreamReaderOptions, type TurnReader } from '../stream.ts';
import type { ToolDefinition } from '../tool.ts';
import { answerFailed, answersOf, answerText, type ReplyOptions, type ReplySource, type TurnAnswer } from '../turn.ts';

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
  const response = call.status === 'committed' ? { output: call.output ?? null } : { error: outcomeText(call) };
  return {
    functionResponse: call.generatedId ? { name: call.name, response } : { name: call.name, id: call.id, response },
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
 * Reads a Gemini (or Vertex AI) stream into the gate. A whole `functionCall` part is checked as
 * it arrives (its arguments are built by the server, so they cannot be half-written). With Vertex's
 * `streamFunctionCallArguments`, a call opens with `{ name, willContinue: true }`, its `partialArgs`
 * are applied by JSON path, and the empty `functionCall` closes it. `finishReason: "MAX_TOKENS"`
 * rejects every call still open as `truncated`. Calls without an id get one from the gate, and the
 * reply never sends it back. `MALFORMED_FUNCTION_CALL` and the other finish reasons are in
 * `stopReason()`.
 *
 * @example
 * const reader = readGeminiStream(gate);
 * await reader.read(await ai.models.generateContentStream({ model, contents, config }));
 * contents.push(modelContent, geminiReply(await reader.settled()));
 */
export function readGeminiStream(gate: ToolGate, options: StreamReaderOptions & { readonly candidate?: number } = {}): TurnReader<GeminiChunk> {
  const calls = createCallAssembler(gate, 'gemini', options);
  const wanted = options.candidate ?? 0;
  let count = 0;
  /** The Vertex call whose arguments are streaming, and the object built from its partialArgs. */
  let streaming: { key: string; args: Record<string, unknown> } | undefined;
  let stop: string | undefined;

  function onFunctionCall(call: Record<string, unknown>): void {
    const name = typeof call['name'] === 'string' && call['name'] !== '' ? call['name'] : undefined;
    const id = typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : undefined;
    const partial = call['partialArgs'];
    if (name !== undefined) {
      if (streaming !== undefined) calls.complete(streaming.key);
      const key = `p${++count}`;
      calls.start(key, { id, name });
      if (call['willContinue'] === true) {
        streaming = { key, args: isRecord(call['args']) ? { ...call['args'] } : {} };
        if (Array.isArray(partial)) applyPartial(streaming, partial);
        return;
      }
      streaming = undefined;
      calls.provide(key, isRecord(call['args']) ? call['args'] : call['args'] === undefined ? {} : call['args']);
      calls.complete(key);
      return;
    }
    if (streaming === undefined) return;
    if (Array.isArray(partial)) applyPartial(streaming, partial);
    else if (call['willContinue'] !== true) {
      // The empty functionCall ends the streamed call.
      calls.provide(streaming.key, streaming.args);
      calls.complete(streaming.key);
      streaming = undefined;
    }
  }

  function applyPartial(target: { key: string; args: Record<string, unknown> }, partials: readonly unknown[]): void {
    for (const partial of partials) {
      if (!isRecord(partial) || typeof partial['jsonPath'] !== 'string') continue;
      const value =
        'stringValue' in partial ? partial['stringValue'] : 'numberValue' in partial ? partial['numberValue'] : 'boolValue' in partial ? partial['boolValue'] : 'nullValue' in partial ? null : undefined;
      if (value === undefined) continue;
      setPath(target.args, partial['jsonPath'], value, typeof value === 'string');
    }
    calls.draft(target.key, () => structuredClone(target.args));
  }

  function push(chunk: GeminiChunk): void {
    if (!isRecord(chunk)) return;
    if (typeof chunk['responseId'] === 'string') calls.setTurn(chunk['responseId']);
    const candidates = chunk['candidates'];
    if (!Array.isArray(candidates)) return;
    for (const candidate of candidates as unknown[]) {
      if (!isRecord(candidate) || (typeof candidate['index'] === 'number' ? candidate['index'] : 0) !== wanted) continue;
      const content = candidate['content'];
      const parts = isRecord(content) ? content['parts'] : undefined;
      if (Array.isArray(parts)) {
        for (const part of parts as unknown[]) {
          if (isRecord(part) && isRecord(part['functionCall'])) onFunctionCall(part['functionCall']);
        }
      }
      const finish = candidate['finishReason'];
      if (typeof finish === 'string' && finish !== '' && finish !== 'FINISH_REASON_UNSPECIFIED') {
        stop = finish;
        calls.end(CUT.has(finish) ? outputCutOff(`finishReason "${finish}"`) : undefined);
      }
    }
  }

  return calls.reader(
    push,
    () => calls.end(streaming === undefined ? undefined : 'the stream ended while this call was still streaming; nothing was run'),
    () => stop,
  );
}

/** Sets `$.a.b[0].c` in `root`, creating objects and arrays on the way; strings continue across chunks. */
function setPath(root: Record<string, unknown>, path: string, value: unknown, append: boolean): void {
  const keys: (string | number)[] = [];
  const pattern = /\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]/g;
  let match: RegExpExecArray | null;
  let at = path.startsWith('$') ? 1 : 0;
  pattern.lastIndex = at;
  while ((match = pattern.exec(path)) !== null && match.index === at) {
    keys.push(match[2] !== undefined ? Number(match[2]) : (match[1] ?? match[3] ?? ''));
    at = pattern.lastIndex;
  }
  if (keys.length === 0 || at !== path.length) return;
  let node: Record<string | number, unknown> = root;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i] as string | number;
    if (key === '__proto__') return;
    const next = node[key];
    if (typeof next !== 'object' || next === null) node[key] = typeof keys[i + 1] === 'number' ? [] : {};
    node = node[key] as Record<string | number, unknown>;
  }
  const last = keys[keys.length - 1] as string | number;
  if (last === '__proto__') return;
  const current = node[last];
  node[last] = append && typeof current === 'string' ? current + (value as string) : value;
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
  const parts: (GeminiToolResult | { text: string })[] = answersOf(source, 'geminiReply').map(functionResponse);
  if (options.notice !== undefined) parts.push({ text: options.notice });
  return { role: 'user', parts };
}

function functionResponse(answer: TurnAnswer): GeminiToolResult {
  const [only] = answer.calls;
  let response: GeminiToolResult['functionResponse']['response'];
  if (answerFailed(answer)) response = { error: answerText(answer) };
  else if (answer.calls.length === 1 && only?.status === 'committed') response = { output: only.output ?? null };
  else response = { output: answerText(answer) };
  return { functionResponse: answer.generatedId ? { name: answer.name, response } : { name: answer.name, id: answer.id, response } };
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
    return tool.description === undefined ? { name: tool.name, parametersJsonSchema } : { name: tool.name, description: tool.description, parametersJsonSchema };
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
