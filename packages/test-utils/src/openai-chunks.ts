import type { SseEvent } from './replay-server.ts';

export interface ToolCallDelta {
  readonly index?: number;
  readonly id?: string;
  readonly name?: string;
  readonly args?: string;
}

/** One Chat Completions chunk as OpenAI streams it. */
export function chatChunk(
  toolCalls: readonly ToolCallDelta[] = [],
  finish: string | null = null,
  id = 'chatcmpl-T1',
): SseEvent {
  return {
    data: {
      id,
      object: 'chat.completion.chunk',
      created: 1_767_225_700,
      model: 'gpt-4.1-2025-04-14',
      choices: [
        {
          index: 0,
          delta:
            toolCalls.length === 0
              ? {}
              : {
                  tool_calls: toolCalls.map((call) => ({
                    ...(call.index === undefined ? {} : { index: call.index }),
                    ...(call.id === undefined ? {} : { id: call.id, type: 'function' }),
                    function: {
                      ...(call.name === undefined ? {} : { name: call.name }),
                      ...(call.args === undefined ? {} : { arguments: call.args }),
                    },
                  })),
                },
          logprobs: null,
          finish_reason: finish,
        },
      ],
    },
  };
}

/** A whole streamed turn: the role chunk, the tool-call chunks, the finish chunk, and `[DONE]`. */
export function chatStream(
  parts: readonly (readonly ToolCallDelta[])[],
  finish: string | null = 'tool_calls',
): SseEvent[] {
  const role: SseEvent = {
    data: {
      id: 'chatcmpl-T1',
      object: 'chat.completion.chunk',
      created: 1_767_225_700,
      model: 'gpt-4.1-2025-04-14',
      choices: [
        { index: 0, delta: { role: 'assistant', content: null }, logprobs: null, finish_reason: null },
      ],
    },
  };
  return [
    role,
    ...parts.map((part) => chatChunk(part)),
    ...(finish === null ? [] : [chatChunk([], finish)]),
    { data: '[DONE]' },
  ];
}

/** Splits text into fragments of `size` characters, as a model streams them. */
export function fragments(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** One call streamed the OpenAI way: a first delta with id and name, then argument fragments. */
export function streamedCall(
  index: number,
  id: string,
  name: string,
  args: string,
  size = 7,
): ToolCallDelta[][] {
  return [[{ index, id, name, args: '' }], ...fragments(args, size).map((piece) => [{ index, args: piece }])];
}

/** Interleaves several calls' deltas one by one, as parallel calls may arrive. */
export function interleave(...streams: ToolCallDelta[][][]): ToolCallDelta[][] {
  const out: ToolCallDelta[][] = [];
  for (let i = 0; streams.some((stream) => i < stream.length); i++) {
    for (const stream of streams) {
      const part = stream[i];
      if (part !== undefined) out.push(part);
    }
  }
  return out;
}
