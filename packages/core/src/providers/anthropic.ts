import { checkToolNames, toolJsonSchema } from '../tool/json-schema-export.ts';
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
import type { ToolDefinition } from '../tool/tool.ts';
import { answerFailed, answersOf, answerText, type ReplyOptions, type ReplySource } from '../reply/turn.ts';

/**
 * An Anthropic `tool_result` content block; `is_error` is set for every call that did not commit.
 *
 * @example
 * const block: AnthropicToolResult = { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Done.' };
 */
export interface AnthropicToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/**
 * Answers one settled call as an Anthropic `tool_result` block.
 *
 * @example
 * const reply = { role: 'user', content: calls.map(anthropicToolResult) };
 */
export function anthropicToolResult(call: SettledCall): AnthropicToolResult {
  const block: AnthropicToolResult = {
    type: 'tool_result',
    tool_use_id: call.id,
    content: outcomeText(call),
  };
  if (call.status !== 'committed') block.is_error = true;
  return block;
}

/**
 * Anthropic's rule for tool names.
 *
 * @example
 * ANTHROPIC_TOOL_NAME.test('get_weather'); // true
 */
export const ANTHROPIC_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * One raw Messages streaming event, as the `@anthropic-ai/sdk` yields it from
 * `messages.create({ stream: true })` or a `MessageStream` (only the fields the reader uses).
 *
 * @example
 * const event: AnthropicStreamEvent = { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"path"' } };
 */
export interface AnthropicStreamEvent {
  readonly type: string;
  readonly index?: number;
  readonly message?: unknown;
  readonly content_block?: unknown;
  readonly delta?: unknown;
  /** On an `error` event (e.g. `overloaded_error` mid-stream). */
  readonly error?: unknown;
}

const CUT_STOP_REASONS = new Set(['max_tokens', 'model_context_window_exceeded']);

/**
 * A content block of the assistant message a stream carried: `text`, `thinking` (with its
 * `signature`), `redacted_thinking`, or `tool_use` (with its `input` as the model wrote it).
 *
 * @example
 * const block: AnthropicContentBlock = { type: 'tool_use', id: 'toolu_1', name: 'search', input: { q: 'rates' } };
 */
export type AnthropicContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/**
 * The assistant message of a streamed turn, to put in `messages` before the turn's reply.
 *
 * @example
 * const message: AnthropicAssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] };
 */
export interface AnthropicAssistantMessage {
  role: 'assistant';
  content: AnthropicContentBlock[];
}

/**
 * What {@link readAnthropicStream} returns: a turn reader that also assembles the assistant message.
 *
 * @example
 * const reader: AnthropicStreamReader = readAnthropicStream(gate);
 */
export interface AnthropicStreamReader extends TurnReader<AnthropicStreamEvent> {
  /**
   * The assistant message the stream carried, block by block in index order: text, thinking with
   * its signature (the API wants it back with the tool results), redacted thinking, and each
   * `tool_use` with its input as read (as far as it came, for a block that was cut off). Empty
   * text blocks, which the API refuses, and the blocks of server tools are left out.
   */
  readonly assistantMessage: () => AnthropicAssistantMessage;
}

/** One content block as the stream builds it: its start block, and the deltas so far. */
interface Block {
  readonly start: Record<string, unknown>;
  text: string;
  signature: string;
}

/**
 * Reads a Messages stream into the gate. Each `tool_use` block appears at `content_block_start`
 * and is checked at its `content_block_stop` when its `input_json_delta` fragments make whole
 * JSON (an empty buffer is the block's start `input`, `{}`). A block that stops with anything
 * else waits for the message's `stop_reason`: `max_tokens` rejects it as `truncated`, never as a
 * repaired call (the SDK's own `finalMessage()` would hand you the cut input with its last key
 * silently dropped); any other stop reason lets the gate say what is wrong with it.
 *
 * @example
 * const reader = readAnthropicStream(gate);
 * await reader.read(await anthropic.messages.create({ model, max_tokens, messages, tools, stream: true }));
 * messages.push(reader.assistantMessage(), anthropicReply(await reader.settled()));
 */
export function readAnthropicStream(
  gate: StreamGate,
  options: StreamReaderOptions = {},
): AnthropicStreamReader {
  const calls = createCallAssembler(gate, 'anthropic', options);
  const startInputs = new Map<string, unknown>();
  const blocks = new Map<number, Block>();
  let stop: string | undefined;

  /** Keeps the text, thinking and other deltas of every block for the assistant message. */
  function onDelta(block: Block | undefined, delta: Record<string, unknown>): void {
    if (block === undefined) return;
    switch (delta['type']) {
      case 'text_delta':
        if (typeof delta['text'] === 'string') block.text += delta['text'];
        return;
      case 'thinking_delta':
        if (typeof delta['thinking'] === 'string') block.text += delta['thinking'];
        return;
      case 'signature_delta':
        if (typeof delta['signature'] === 'string') block.signature += delta['signature'];
        return;
    }
  }

  function push(event: AnthropicStreamEvent): void {
    if (!isRecord(event)) return;
    const index = event['index'];
    const key = typeof index === 'number' ? String(index) : undefined;
    switch (event['type']) {
      case 'message_start': {
        const message = event['message'];
        if (isRecord(message) && typeof message['id'] === 'string') calls.setTurn(message['id']);
        return;
      }
      case 'content_block_start': {
        const block = event['content_block'];
        if (key === undefined || !isRecord(block)) return;
        if (!calls.ended() && !blocks.has(index as number)) {
          const text = block['text'] ?? block['thinking'];
          const signature = block['signature'];
          blocks.set(index as number, {
            start: block,
            text: typeof text === 'string' ? text : '',
            signature: typeof signature === 'string' ? signature : '',
          });
        }
        if (block['type'] !== 'tool_use') return;
        startInputs.set(key, block['input']);
        calls.start(key, {
          id: typeof block['id'] === 'string' ? block['id'] : undefined,
          name: typeof block['name'] === 'string' ? block['name'] : undefined,
          position: index as number,
        });
        return;
      }
      case 'content_block_delta': {
        const delta = event['delta'];
        if (key === undefined || !isRecord(delta)) return;
        if (!calls.ended()) onDelta(blocks.get(index as number), delta);
        if (delta['type'] !== 'input_json_delta') return;
        if (typeof delta['partial_json'] === 'string') calls.append(key, delta['partial_json']);
        return;
      }
      case 'content_block_stop': {
        if (key === undefined || !calls.has(key)) return;
        if (calls.buffered(key) === '') {
          const input = startInputs.get(key);
          calls.provide(key, isRecord(input) ? input : {});
        }
        calls.complete(key);
        return;
      }
      case 'message_delta': {
        const delta = event['delta'];
        const reason = isRecord(delta) ? delta['stop_reason'] : undefined;
        if (typeof reason !== 'string') return;
        stop = reason;
        calls.end(CUT_STOP_REASONS.has(reason) ? outputCutOff(`stop_reason "${reason}"`) : undefined);
        return;
      }
      case 'message_stop':
        calls.end(
          'the message stopped without a stop_reason while this call was unfinished; nothing was run',
        );
        return;
      case 'error':
        stop = 'error';
        calls.breakOff(STREAM_ERROR);
        return;
    }
  }

  function assistantMessage(): AnthropicAssistantMessage {
    const content: AnthropicContentBlock[] = [];
    for (const [index, block] of [...blocks].sort(([a], [b]) => a - b)) {
      const { start } = block;
      switch (start['type']) {
        case 'text':
          if (block.text !== '') content.push({ type: 'text', text: block.text });
          break;
        case 'thinking':
          content.push({ type: 'thinking', thinking: block.text, signature: block.signature });
          break;
        case 'tool_use': {
          const key = String(index);
          content.push({
            type: 'tool_use',
            id: calls.idOf(key) ?? '',
            name: typeof start['name'] === 'string' ? start['name'] : '',
            input: calls.input(key),
          });
          break;
        }
        case 'redacted_thinking':
          if (typeof start['data'] === 'string')
            content.push({ type: 'redacted_thinking', data: start['data'] });
          break;
      }
    }
    return { role: 'assistant', content };
  }

  return {
    ...calls.reader(
      push,
      () =>
        calls.end('the stream ended before the message stopped, with this call unfinished; nothing was run'),
      () => stop,
    ),
    assistantMessage,
  };
}

/**
 * The user message that answers one assistant turn for Anthropic: every `tool_result` block in
 * one message, one per `tool_use` id, in order, before any text (the optional notice comes after
 * them as a text block). Failed, rejected and cancelled calls are answered with `is_error: true`.
 *
 * @example
 * messages.push({ role: 'assistant', content: message.content }, anthropicReply(await reader.settled()));
 */
export function anthropicReply(
  source: ReplySource,
  options: ReplyOptions = {},
): { role: 'user'; content: (AnthropicToolResult | { type: 'text'; text: string })[] } {
  const content: (AnthropicToolResult | { type: 'text'; text: string })[] = answersOf(
    source,
    'anthropicReply',
  ).map((answer) => {
    const block: AnthropicToolResult = {
      type: 'tool_result',
      tool_use_id: answer.id,
      content: answerText(answer),
    };
    if (answerFailed(answer)) block.is_error = true;
    return block;
  });
  if (options.notice !== undefined) content.push({ type: 'text', text: options.notice });
  return { role: 'user', content };
}

/**
 * An Anthropic tool definition.
 *
 * @example
 * const tool: AnthropicTool = { name: 'search', input_schema: { type: 'object', properties: { q: { type: 'string' } } } };
 */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: { type: 'object'; [key: string]: unknown };
}

/**
 * The gate's tools as Anthropic `tools`. Names must match `^[a-zA-Z0-9_-]{1,64}$`, and each
 * input schema must be a JSON Schema object.
 *
 * @example
 * await anthropic.messages.create({ model, max_tokens, messages, tools: anthropicTools(gate.tools) });
 */
export function anthropicTools(tools: readonly ToolDefinition[]): AnthropicTool[] {
  checkToolNames(tools, ANTHROPIC_TOOL_NAME, 'anthropicTools', 'Anthropic');
  return tools.map((tool) => {
    const schema = toolJsonSchema(tool, 'anthropicTools');
    if (schema['type'] !== 'object') {
      throw new Error(
        `anthropicTools: tool "${tool.name}" must take an object (its input schema has type ${JSON.stringify(schema['type'] ?? null)}).`,
      );
    }
    const input_schema = { ...schema, type: 'object' as const };
    return tool.description === undefined
      ? { name: tool.name, input_schema }
      : { name: tool.name, description: tool.description, input_schema };
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
