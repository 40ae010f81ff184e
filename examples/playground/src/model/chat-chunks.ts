import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

/** One tool call a scripted turn makes. `arguments` is sent exactly as written, valid JSON or not. */
export interface ScriptedCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** One assistant turn, before it is cut into stream chunks. */
export interface ScriptedTurn {
  readonly content?: string;
  readonly calls?: readonly ScriptedCall[];
  /** Defaults to `tool_calls` when there are calls and `stop` otherwise. */
  readonly finishReason?: 'stop' | 'tool_calls' | 'length';
}

export interface ChunkOptions {
  readonly completionId: string;
  readonly model: string;
  readonly created: number;
  /** Send the argument fragments of parallel calls interleaved, as some gateways do. */
  readonly interleave?: boolean;
  /** Characters per argument fragment; the chunk that opens a call carries `""`. */
  readonly fragment?: number;
}

/**
 * Cuts a turn into the `chat.completion.chunk` objects an OpenAI-compatible server streams: a
 * role delta, content in small pieces, each call opened with its `index`, `id` and name and then
 * its arguments in fragments keyed by `index`, a chunk with `finish_reason`, and a final usage
 * chunk with no choices.
 */
export function turnChunks(turn: ScriptedTurn, options: ChunkOptions): ChatCompletionChunk[] {
  const base = {
    id: options.completionId,
    object: 'chat.completion.chunk' as const,
    created: options.created,
    model: options.model,
  };
  const chunk = (
    delta: ChatCompletionChunk.Choice.Delta,
    finish: ChatCompletionChunk.Choice['finish_reason'] = null,
  ): ChatCompletionChunk => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const chunks: ChatCompletionChunk[] = [
    chunk({ role: 'assistant', content: turn.content === undefined ? null : '' }),
  ];
  for (const piece of contentPieces(turn.content ?? '')) chunks.push(chunk({ content: piece }));

  const calls = turn.calls ?? [];
  const size = options.fragment ?? 12;
  const fragments = calls.map((call) => argumentFragments(call.arguments, size));
  const opening = (call: ScriptedCall, index: number) =>
    chunk({
      tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
    });
  const fragment = (index: number, text: string) =>
    chunk({ tool_calls: [{ index, function: { arguments: text } }] });

  if (options.interleave === true) {
    calls.forEach((call, index) => chunks.push(opening(call, index)));
    const longest = Math.max(0, ...fragments.map((list) => list.length));
    for (let step = 0; step < longest; step++) {
      fragments.forEach((list, index) => {
        const text = list[step];
        if (text !== undefined) chunks.push(fragment(index, text));
      });
    }
  } else {
    calls.forEach((call, index) => {
      chunks.push(opening(call, index));
      for (const text of fragments[index] ?? []) chunks.push(fragment(index, text));
    });
  }

  chunks.push(chunk({}, turn.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop')));
  const completionTokens = Math.ceil(
    ((turn.content ?? '').length +
      calls.reduce((sum, call) => sum + call.arguments.length + call.name.length, 0)) /
      4,
  );
  chunks.push({
    ...base,
    choices: [],
    usage: { prompt_tokens: 180, completion_tokens: completionTokens, total_tokens: 180 + completionTokens },
  });
  return chunks;
}

/** Server-sent events framing: one `data:` line per chunk, then `data: [DONE]`. */
export function sseFrame(chunk: ChatCompletionChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';

/** Content arrives a word or two at a time, as tokens do. */
function contentPieces(content: string): string[] {
  return content.match(/\S*\s*/g)?.filter((piece) => piece !== '') ?? [];
}

function argumentFragments(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size));
  return pieces;
}
