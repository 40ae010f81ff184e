import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

/** A provider-level stream part, as a model hands it to `streamText`. */
type ModelPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;
/** What the model was sent: the AI SDK's provider-level prompt. */
export type Prompt = Parameters<MockLanguageModelV3['doStream']>[0]['prompt'];

export interface ScriptedModel {
  readonly model: MockLanguageModelV3;
  readonly prompts: Prompt[];
  /** The tool results the model was sent in its last prompt, as JSON text. */
  readonly lastToolResults: () => string[];
}

/** One answer of the scripted model: tool calls (with their input as the model wrote it), or text. */
export type Turn =
  | { readonly calls: readonly { readonly id: string; readonly name: string; readonly input: string }[] }
  | { readonly text: string };

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function partsOf(turn: Turn): ModelPart[] {
  const parts: ModelPart[] = [{ type: 'stream-start', warnings: [] }];
  if ('text' in turn) {
    parts.push(
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: turn.text },
      { type: 'text-end', id: 't' },
    );
    parts.push({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage });
    return parts;
  }
  for (const call of turn.calls) {
    parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name });
    parts.push({ type: 'tool-input-delta', id: call.id, delta: call.input });
    parts.push({ type: 'tool-input-end', id: call.id });
    parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.input });
  }
  parts.push({ type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage });
  return parts;
}

/**
 * A model that plays a script, one turn per model call, and keeps every prompt it was sent (what
 * the model was told about each call). After the script it says "Done.".
 */
export function scriptedModel(...turns: Turn[]): ScriptedModel {
  const prompts: Prompt[] = [];
  const model = new MockLanguageModelV3({
    doStream: (options) => {
      prompts.push(options.prompt);
      const turn = turns.shift() ?? { text: 'Done.' };
      return Promise.resolve({
        stream: simulateReadableStream({
          chunks: partsOf(turn),
          initialDelayInMs: null,
          chunkDelayInMs: null,
        }),
      });
    },
  });
  /** The tool results the model was sent in its last prompt, as text. */
  const lastToolResults = (): string[] =>
    (prompts.at(-1) ?? []).flatMap((message) =>
      message.role === 'tool'
        ? message.content.flatMap((part) =>
            part.type === 'tool-result' ? [JSON.stringify(part.output)] : [],
          )
        : [],
    );
  return { model, prompts, lastToolResults };
}
