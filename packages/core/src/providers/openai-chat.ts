import { checkToolNames, toolJsonSchema } from '../tool/json-schema-export.ts';
import { openaiStrictSchema } from '../schema/openai-strict.ts';
import { outcomeText } from '../reply/outcome.ts';
import type { SettledCall } from '../record/record.ts';
import {
  outputCutOff,
  createCallAssembler,
  type StreamReaderOptions,
  type TurnReader,
  type StreamGate,
} from '../stream/stream.ts';
import type { ToolDefinition } from '../tool/tool.ts';
import { answersOf, answerText, type ReplyOptions, type ReplySource } from '../reply/turn.ts';

/**
 * A Chat Completions `tool` message. The API has no error flag, so a failure is said in `content`.
 *
 * @example
 * const message: OpenAIChatToolResult = { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' };
 */
export interface OpenAIChatToolResult {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/**
 * Answers one settled call as a Chat Completions `tool` message.
 *
 * @example
 * messages.push(openaiChatToolResult(call));
 */
export function openaiChatToolResult(call: SettledCall): OpenAIChatToolResult {
  return { role: 'tool', tool_call_id: call.id, content: outcomeText(call) };
}

/**
 * OpenAI's rule for function names.
 *
 * @example
 * OPENAI_TOOL_NAME.test('files.read'); // false: no dots
 */
export const OPENAI_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * One streamed Chat Completions chunk, as the `openai` SDK yields it from
 * `chat.completions.create({ stream: true })` (only the fields the reader uses).
 *
 * @example
 * const chunk: OpenAIChatChunk = { id: 'chatcmpl-1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"q"' } }] }, finish_reason: null }] };
 */
export interface OpenAIChatChunk {
  readonly id?: string;
  readonly choices?:
    | readonly {
        readonly index?: number;
        readonly delta?: {
          readonly content?: string | null;
          readonly tool_calls?:
            | readonly {
                readonly index?: number;
                readonly id?: string | null;
                readonly function?: {
                  readonly name?: string | null;
                  readonly arguments?: string | null;
                } | null;
              }[]
            | null;
        } | null;
        readonly finish_reason?: string | null;
      }[]
    | null;
}

/**
 * The assistant message of a streamed turn, assembled from the stream events themselves (the
 * SDK's own assembly throws when a gateway numbers parallel calls from 1). Put it in the history
 * before the turn's reply.
 *
 * @example
 * messages.push(reader.assistantMessage(), ...openaiChatReply(await reader.settled()));
 */
export interface OpenAIChatAssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
}

/**
 * What {@link readOpenAIChatStream} returns: a turn reader that also assembles the assistant message.
 *
 * @example
 * const reader: OpenAIChatStreamReader = readOpenAIChatStream(gate);
 */
export interface OpenAIChatStreamReader extends TurnReader<OpenAIChatChunk> {
  readonly assistantMessage: () => OpenAIChatAssistantMessage;
}

/**
 * The one argument fragment a chunk carries, when it carries only that: one choice (the one
 * read), not finishing, no content, one tool call part with an index and no id, a function with
 * arguments and no name. Anything else is read the long way.
 */
function loneFragment(choices: unknown[], wanted: number): { index: number; text: string } | undefined {
  const choice = choices[0] as Record<string, unknown> | null;
  if (
    choices.length !== 1 ||
    typeof choice !== 'object' ||
    choice === null ||
    choice['finish_reason'] != null
  )
    return undefined;
  const delta = choice['delta'] as Record<string, unknown> | null | undefined;
  const parts =
    typeof delta === 'object' && delta !== null && delta['content'] == null ? delta['tool_calls'] : undefined;
  if (
    !Array.isArray(parts) ||
    parts.length !== 1 ||
    (typeof choice['index'] === 'number' ? choice['index'] : 0) !== wanted
  )
    return undefined;
  const part = parts[0] as Record<string, unknown> | null;
  if (typeof part !== 'object' || part === null || part['id'] != null || typeof part['index'] !== 'number')
    return undefined;
  const fn = part['function'] as Record<string, unknown> | null | undefined;
  if (typeof fn !== 'object' || fn === null || fn['name'] != null || typeof fn['arguments'] !== 'string')
    return undefined;
  return { index: part['index'], text: fn['arguments'] };
}

/**
 * Reads a Chat Completions stream into the gate. Fragments are keyed by `index` (any numbering;
 * by call id first, and by the latest call when a gateway omits both), and every call is checked
 * when the chunk with `finish_reason` arrives, or when the stream ends without one.
 * `finish_reason: "length"` or `"content_filter"` rejects each call whose arguments are not whole
 * JSON as `truncated`.
 *
 * @example
 * const reader = readOpenAIChatStream(gate);
 * await reader.read(await openai.chat.completions.create({ model, messages, tools, stream: true }));
 * const turn = await reader.settled();
 * messages.push(reader.assistantMessage(), ...openaiChatReply(turn));
 */
export function readOpenAIChatStream(
  gate: StreamGate,
  options: StreamReaderOptions & { readonly choice?: number } = {},
): OpenAIChatStreamReader {
  const calls = createCallAssembler(gate, 'openai-chat', options);
  const wanted = options.choice ?? 0;
  const byIndex = new Map<number, string>();
  const byId = new Map<string, string>();
  let count = 0;
  let stop: string | undefined;
  let content = '';
  let turnSeen = false;

  function keyFor(index: unknown, id: string | undefined): string | undefined {
    if (id !== undefined) {
      const known = byId.get(id);
      if (known !== undefined) return known;
    }
    if (typeof index === 'number') {
      const current = byIndex.get(index);
      const currentId = current === undefined ? undefined : calls.idOf(current);
      // A new id at a used index is a new call (some gateways never increment the index).
      if (current !== undefined && (id === undefined || currentId === undefined || currentId === id))
        return current;
      const key = `${index}#${++count}`;
      byIndex.set(index, key);
      return key;
    }
    if (id !== undefined) return `id#${++count}`;
    return calls.latestKey();
  }

  /** The shape of almost every chunk: one more argument fragment of a call already open. */
  function pushFragment(choices: unknown[]): boolean {
    const fragment = loneFragment(choices, wanted);
    const key = fragment === undefined ? undefined : byIndex.get(fragment.index);
    if (fragment === undefined || key === undefined) return false;
    calls.append(key, fragment.text);
    return true;
  }

  function push(chunk: OpenAIChatChunk): void {
    if (typeof chunk !== 'object' || chunk === null) return;
    if (turnSeen && Array.isArray(chunk.choices) && pushFragment(chunk.choices as unknown[])) return;
    if (!turnSeen && typeof chunk.id === 'string') {
      calls.setTurn(chunk.id);
      turnSeen = true;
    }
    const choices: unknown = chunk.choices;
    if (!Array.isArray(choices)) return;
    // Indexed loops and plain property reads: this runs once per streamed fragment. `isObject`
    // lets arrays through, which is safe: reading a named property of an array gives undefined.
    for (let c = 0; c < choices.length; c++) {
      const choice: unknown = choices[c];
      if (!isObject(choice) || (typeof choice['index'] === 'number' ? choice['index'] : 0) !== wanted)
        continue;
      const delta = choice['delta'];
      if (isObject(delta)) {
        if (typeof delta['content'] === 'string') content += delta['content'];
        const deltas = delta['tool_calls'];
        if (Array.isArray(deltas)) {
          for (let d = 0; d < deltas.length; d++) {
            const part: unknown = deltas[d];
            if (isObject(part)) onToolCall(part);
          }
        }
      }
      const finish = choice['finish_reason'];
      if (typeof finish === 'string' && finish !== '' && !calls.ended()) {
        stop = finish;
        calls.end(
          finish === 'length' || finish === 'content_filter'
            ? outputCutOff(`finish_reason "${finish}"`)
            : undefined,
        );
      }
    }
  }

  function onToolCall(part: Record<string, unknown>): void {
    const id = typeof part['id'] === 'string' && part['id'] !== '' ? part['id'] : undefined;
    const fn = part['function'];
    const name = isObject(fn) && typeof fn['name'] === 'string' ? fn['name'] : undefined;
    const fragment = isObject(fn) && typeof fn['arguments'] === 'string' ? fn['arguments'] : undefined;
    const index = part['index'];
    if (id === undefined && name === undefined && typeof index === 'number') {
      // The common case: one more fragment of a call already started at this index.
      const key = byIndex.get(index);
      if (key !== undefined) {
        if (fragment !== undefined) calls.append(key, fragment);
        return;
      }
    }
    const key = keyFor(index, id);
    if (key === undefined) return;
    if (id !== undefined) byId.set(id, key);
    calls.start(key, { id, name });
    if (fragment !== undefined) calls.append(key, fragment);
  }

  return {
    ...calls.reader(
      push,
      () => calls.end(),
      () => stop,
    ),
    assistantMessage() {
      const sent = calls.sent();
      const message: OpenAIChatAssistantMessage = {
        role: 'assistant',
        content: content === '' ? null : content,
      };
      if (sent.length > 0) {
        message.tool_calls = sent.map((call) => ({
          id: call.id,
          type: 'function',
          function: {
            name: call.name,
            arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
          },
        }));
      }
      return message;
    },
  };
}

/**
 * A message of a Chat Completions reply: a `tool` message per call, and the optional notice as a
 * `user` message after them.
 *
 * @example
 * const message: OpenAIChatReplyMessage = { role: 'user', content: 'Stop calling tools.' };
 */
export type OpenAIChatReplyMessage = OpenAIChatToolResult | { role: 'user'; content: string };

/**
 * The reply to one assistant turn for Chat Completions: one `tool` message per call id, in order,
 * each answered exactly once, rejected and cancelled calls included. Send them right after the
 * assistant message that carried the calls.
 *
 * @example
 * messages.push(assistant, ...openaiChatReply(await reader.settled()));
 */
export function openaiChatReply(source: ReplySource, options: ReplyOptions = {}): OpenAIChatReplyMessage[] {
  const messages: OpenAIChatReplyMessage[] = answersOf(source, 'openaiChatReply').map((answer) => ({
    role: 'tool',
    tool_call_id: answer.id,
    content: answerText(answer),
  }));
  if (options.notice !== undefined) messages.push({ role: 'user', content: options.notice });
  return messages;
}

/**
 * A Chat Completions function tool definition.
 *
 * @example
 * const tool: OpenAIChatTool = { type: 'function', function: { name: 'search', parameters: { type: 'object' }, strict: false } };
 */
export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict: boolean };
}

/**
 * How tools are exported for OpenAI: `strict: 'auto'` (the default) uses strict mode for each tool
 * whose schema allows it; `true` requires it and throws, listing every reason, for a tool that
 * cannot be made strict; `false` never uses it.
 *
 * @example
 * openaiChatTools(gate.tools, { strict: true });
 */
export interface OpenAIToolsOptions {
  readonly strict?: boolean | 'auto';
}

/**
 * The gate's tools as Chat Completions `tools`. Names must match `^[a-zA-Z0-9_-]{1,64}$`.
 *
 * @example
 * await openai.chat.completions.create({ model, messages, tools: openaiChatTools(gate.tools) });
 */
export function openaiChatTools(
  tools: readonly ToolDefinition[],
  options: OpenAIToolsOptions = {},
): OpenAIChatTool[] {
  return openaiFunctions(tools, options, 'openaiChatTools').map(
    ({ name, description, parameters, strict }) => ({
      type: 'function',
      function:
        description === undefined ? { name, parameters, strict } : { name, description, parameters, strict },
    }),
  );
}

/**
 * Each tool as an OpenAI function (name, description, parameters, strict), checked against
 * OpenAI's rules; shared by the Chat Completions and Responses exports.
 *
 * @example
 * openaiFunctions(gate.tools, { strict: 'auto' }, 'openaiChatTools');
 */
export function openaiFunctions(
  tools: readonly ToolDefinition[],
  options: OpenAIToolsOptions,
  who: string,
): { name: string; description?: string; parameters: Record<string, unknown>; strict: boolean }[] {
  checkToolNames(tools, OPENAI_TOOL_NAME, who, 'OpenAI');
  const mode = options.strict ?? 'auto';
  return tools.map((tool) => {
    const schema = toolJsonSchema(tool, who);
    let parameters = schema;
    let strict = false;
    if (mode !== false) {
      const made = openaiStrictSchema(schema);
      if (made.ok) {
        parameters = made.schema;
        strict = true;
      } else if (mode === true) {
        throw new Error(
          `${who}: tool "${tool.name}" cannot be made strict:\n- ${made.problems.join('\n- ')}`,
        );
      }
    }
    return tool.description === undefined
      ? { name: tool.name, parameters, strict }
      : { name: tool.name, description: tool.description, parameters, strict };
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
