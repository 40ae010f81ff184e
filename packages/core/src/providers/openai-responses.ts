import { outcomeText } from '../reply/outcome.ts';
import type { SettledCall } from '../record/record.ts';
import {
  createCallAssembler,
  type StreamReaderOptions,
  type TurnReader,
  type StreamGate,
} from '../stream/stream.ts';
import type { ToolDefinition } from '../tool/tool.ts';
import { answersOf, answerText, type ReplyOptions, type ReplySource } from '../reply/turn.ts';
import { openaiFunctions, type OpenAIToolsOptions } from './openai-chat.ts';

/**
 * A Responses API `function_call_output` input item, correlated by `call_id`.
 *
 * @example
 * const item: OpenAIResponsesToolResult = { type: 'function_call_output', call_id: 'call_1', output: '{"ok":true}' };
 */
export interface OpenAIResponsesToolResult {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

/**
 * Answers one settled call as a Responses `function_call_output` item.
 *
 * @example
 * input.push(openaiResponsesToolResult(call));
 */
export function openaiResponsesToolResult(call: SettledCall): OpenAIResponsesToolResult {
  return { type: 'function_call_output', call_id: call.id, output: outcomeText(call) };
}

/**
 * One Responses streaming event, as the `openai` SDK yields it from
 * `responses.create({ stream: true })` (only the fields the reader uses).
 *
 * @example
 * const event: OpenAIResponsesEvent = { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 1, delta: '{"q"' };
 */
export interface OpenAIResponsesEvent {
  readonly type: string;
  readonly item_id?: string;
  readonly output_index?: number;
  readonly delta?: unknown;
  readonly arguments?: string;
  readonly name?: string;
  readonly item?: unknown;
  readonly response?: unknown;
  readonly message?: string;
}

/**
 * A Responses `function_call` output item, as the API streams it in `response.output_item.done`.
 *
 * @example
 * const item: OpenAIResponsesFunctionCallItem = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'search', arguments: '{"q":"rates"}', status: 'completed' };
 */
export interface OpenAIResponsesFunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

/**
 * One output item of a streamed response, as the API sent it: a `function_call`, or any other item
 * the stream carried (`message`, `reasoning` with its `encrypted_content`, …), unchanged.
 *
 * @example
 * const items: OpenAIResponsesOutputItem[] = reader.outputItems();
 */
export type OpenAIResponsesOutputItem =
  OpenAIResponsesFunctionCallItem | { type: string; id?: string; [key: string]: unknown };

/**
 * What {@link readOpenAIResponsesStream} returns: a turn reader that also keeps the turn's output items.
 *
 * @example
 * const reader: OpenAIResponsesStreamReader = readOpenAIResponsesStream(gate);
 */
export interface OpenAIResponsesStreamReader extends TurnReader<OpenAIResponsesEvent> {
  /**
   * The turn's output items in output order, as the API sent them at `response.output_item.done`,
   * to put in `input` before the reply when you keep the conversation yourself (`store: false`).
   * A `function_call` the stream never finished is there too, with the arguments that arrived and
   * `status: "incomplete"`, since the reply answers it; other unfinished items are left out.
   */
  readonly outputItems: () => OpenAIResponsesOutputItem[];
}

/**
 * Reads a Responses stream into the gate. Calls are keyed by `item_id`; a call appears at
 * `response.output_item.added` and is checked at `response.function_call_arguments.done` (or
 * `response.output_item.done`), using the provider's final arguments. An item with
 * `status: "incomplete"`, and at `response.incomplete` every call whose arguments are not whole
 * JSON, is rejected as `truncated`. A stream that ends before `response.completed` truncates what
 * was not finished.
 *
 * @example
 * const reader = readOpenAIResponsesStream(gate);
 * await reader.read(await openai.responses.create({ model, input, tools, stream: true, store: false }));
 * input.push(...reader.outputItems(), ...openaiResponsesReply(await reader.settled()));
 */
export function readOpenAIResponsesStream(
  gate: StreamGate,
  options: StreamReaderOptions = {},
): OpenAIResponsesStreamReader {
  const calls = createCallAssembler(gate, 'openai-responses', options);
  let stop: string | undefined;
  /** Every output item seen, by output index: the latest the stream said about it. */
  const items = new Map<number, { item: Record<string, unknown>; done: boolean }>();

  function keep(item: Record<string, unknown>, outputIndex: unknown, done: boolean): void {
    if (calls.ended() || typeof outputIndex !== 'number') return;
    const known = items.get(outputIndex);
    if (known?.done === true) return;
    items.set(outputIndex, { item, done });
  }

  function onItem(item: unknown, outputIndex: unknown, done: boolean): void {
    if (!isRecord(item)) return;
    keep(item, outputIndex, done);
    if (item['type'] !== 'function_call' || typeof item['id'] !== 'string') return;
    const key = item['id'];
    calls.start(key, {
      id: typeof item['call_id'] === 'string' ? item['call_id'] : undefined,
      name: typeof item['name'] === 'string' ? item['name'] : undefined,
      ...(typeof outputIndex === 'number' ? { position: outputIndex } : {}),
    });
    const args = item['arguments'];
    if (!done) {
      if (typeof args === 'string') calls.append(key, args);
      return;
    }
    if (typeof args === 'string') calls.provide(key, args);
    if (item['status'] === 'incomplete') {
      calls.cut(
        key,
        'the provider marked this call incomplete (status "incomplete") before its arguments were done; nothing was run',
      );
    } else calls.complete(key);
  }

  function push(event: OpenAIResponsesEvent): void {
    if (!isRecord(event)) return;
    switch (event['type']) {
      case 'response.created':
      case 'response.in_progress': {
        const response = event['response'];
        if (isRecord(response) && typeof response['id'] === 'string') calls.setTurn(response['id']);
        return;
      }
      case 'response.output_item.added':
        onItem(event['item'], event['output_index'], false);
        return;
      case 'response.function_call_arguments.delta': {
        const key = event['item_id'];
        if (typeof key !== 'string' || typeof event['delta'] !== 'string') return;
        if (!calls.has(key))
          calls.start(
            key,
            typeof event['output_index'] === 'number' ? { position: event['output_index'] } : {},
          );
        calls.append(key, event['delta']);
        return;
      }
      case 'response.function_call_arguments.done': {
        const key = event['item_id'];
        if (typeof key !== 'string') return;
        calls.start(key, { name: typeof event['name'] === 'string' ? event['name'] : undefined });
        if (typeof event['arguments'] === 'string') calls.provide(key, event['arguments']);
        calls.complete(key);
        return;
      }
      case 'response.output_item.done':
        onItem(event['item'], event['output_index'], true);
        return;
      case 'response.completed':
        stop = 'completed';
        calls.end();
        return;
      case 'response.incomplete': {
        const response = event['response'];
        const details = isRecord(response) ? response['incomplete_details'] : undefined;
        const why =
          isRecord(details) && typeof details['reason'] === 'string' ? details['reason'] : 'incomplete';
        stop = why;
        calls.end(
          `the response stopped incomplete ("${why}") before this call's arguments were complete; nothing was run`,
        );
        return;
      }
      case 'response.failed':
      case 'error': {
        stop = event['type'] === 'error' ? 'error' : 'failed';
        calls.breakOff(`the response failed before this call's arguments were complete; nothing was run`);
        return;
      }
    }
  }

  function outputItems(): OpenAIResponsesOutputItem[] {
    const out: OpenAIResponsesOutputItem[] = [];
    for (const [, { item, done }] of [...items].sort(([a], [b]) => a - b)) {
      if (done) out.push(item as OpenAIResponsesOutputItem);
      else if (item['type'] === 'function_call' && typeof item['id'] === 'string') {
        const args = calls.buffered(item['id']);
        out.push({ ...item, arguments: args, status: 'incomplete' } as OpenAIResponsesOutputItem);
      }
    }
    return out;
  }

  return {
    ...calls.reader(
      push,
      () =>
        calls.end(
          'the stream ended before the response completed, with this call unfinished; nothing was run',
        ),
      () => stop,
    ),
    outputItems,
  };
}

/**
 * A Responses reply item: a `function_call_output` per call, and the optional notice as a `user`
 * message after them.
 *
 * @example
 * const item: OpenAIResponsesReplyItem = { role: 'user', content: 'Stop calling tools.' };
 */
export type OpenAIResponsesReplyItem = OpenAIResponsesToolResult | { role: 'user'; content: string };

/**
 * The reply to one assistant turn for the Responses API: one `function_call_output` item per
 * `call_id`, in order, each answered exactly once. When you keep the conversation yourself
 * (`store: false`), put the turn's output items (reasoning and `function_call`) before them;
 * otherwise send them with `previous_response_id`.
 *
 * @example
 * await openai.responses.create({ model, previous_response_id: response.id, input: openaiResponsesReply(turn) });
 */
export function openaiResponsesReply(
  source: ReplySource,
  options: ReplyOptions = {},
): OpenAIResponsesReplyItem[] {
  const items: OpenAIResponsesReplyItem[] = answersOf(source, 'openaiResponsesReply').map((answer) => ({
    type: 'function_call_output',
    call_id: answer.id,
    output: answerText(answer),
  }));
  if (options.notice !== undefined) items.push({ role: 'user', content: options.notice });
  return items;
}

/**
 * A Responses function tool definition (flat, unlike Chat Completions).
 *
 * @example
 * const tool: OpenAIResponsesTool = { type: 'function', name: 'search', parameters: { type: 'object' }, strict: false };
 */
export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  strict: boolean;
}

/**
 * The gate's tools as Responses `tools`, strict where the schema allows (see {@link OpenAIToolsOptions}).
 *
 * @example
 * await openai.responses.create({ model, input, tools: openaiResponsesTools(gate.tools) });
 */
export function openaiResponsesTools(
  tools: readonly ToolDefinition[],
  options: OpenAIToolsOptions = {},
): OpenAIResponsesTool[] {
  return openaiFunctions(tools, options, 'openaiResponsesTools').map((fn) => ({ type: 'function', ...fn }));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
