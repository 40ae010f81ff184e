import { randomUUID } from 'node:crypto';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { simulateReadableStream, type LanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

type Prompt = Parameters<MockLanguageModelV3['doStream']>[0]['prompt'];
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;
type Planned = { readonly name: string; readonly input: string };

/**
 * The chat's model: a real OpenAI-compatible endpoint when OPENAI_API_KEY is set (OPENAI_BASE_URL,
 * default https://api.openai.com/v1; OPENAI_MODEL, default gpt-4o-mini), otherwise a scripted model
 * that runs offline.
 */
export const model: LanguageModel = process.env['OPENAI_API_KEY']
  ? createOpenAICompatible({
      name: 'openai-compatible',
      baseURL: process.env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1',
      apiKey: process.env['OPENAI_API_KEY'],
    }).chatModel(process.env['OPENAI_MODEL'] ?? 'gpt-4o-mini')
  : scriptedModel();

/**
 * A scripted model that plays what the person asked for, one tool call per step:
 * "weather in Paris" calls getWeatherInformation; "pay Bob $50" calls processPayment (over $1000
 * needs approval); "pay Bob twelve fifty" sends the amount as the string "12.50", which the gate
 * refuses. Once every planned call has a result it says how each went.
 */
export function scriptedModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: 'scripted',
    modelId: 'human-in-the-loop',
    doStream: ({ prompt }) => {
      const plan = planOf(lastUserText(prompt));
      const results = resultsSinceLastUser(prompt);
      const next = plan[results.length];
      const chunks = next === undefined ? textParts(summary(plan, results)) : callParts(next);
      return Promise.resolve({ stream: simulateReadableStream({ chunks, chunkDelayInMs: 20 }) });
    },
  });
}

function planOf(text: string): Planned[] {
  const plan: { at: number; call: Planned }[] = [];
  for (const match of text.matchAll(/weather in ([A-Z][\w ]*?[a-z])(?=[,.?!]|\s+(?:and|then)\b|$)/gi)) {
    plan.push({
      at: match.index,
      call: { name: 'getWeatherInformation', input: JSON.stringify({ city: match[1] }) },
    });
  }
  for (const match of text.matchAll(/pay (\w+) \$?([\d.]+)/gi)) {
    plan.push({
      at: match.index,
      call: {
        name: 'processPayment',
        input: JSON.stringify({ amount: Number(match[2]), recipient: match[1] }),
      },
    });
  }
  for (const match of text.matchAll(/pay (\w+) twelve fifty/gi)) {
    plan.push({
      at: match.index,
      call: { name: 'processPayment', input: JSON.stringify({ amount: '12.50', recipient: match[1] }) },
    });
  }
  return plan.sort((a, b) => a.at - b.at).map(({ call }) => call);
}

function lastUserText(prompt: Prompt): string {
  const user = prompt.findLast((message) => message.role === 'user');
  if (user === undefined) return '';
  return user.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
}

/** What each tool call since the person's last message came back with, in order. */
function resultsSinceLastUser(prompt: Prompt): string[] {
  const start = prompt.findLastIndex((message) => message.role === 'user');
  return prompt.slice(start + 1).flatMap((message) =>
    message.role === 'tool'
      ? message.content.flatMap((part) => {
          if (part.type !== 'tool-result') return [];
          const { output } = part;
          if (output.type === 'execution-denied') return ['You said no, so I did not do it.'];
          if (output.type === 'error-text' || output.type === 'text') return [output.value];
          if (output.type === 'json') return [JSON.stringify(output.value)];
          return ['Done.'];
        })
      : [],
  );
}

function summary(plan: Planned[], results: string[]): string {
  if (plan.length === 0)
    return 'I can check the weather or make a payment. Try "What is the weather in Paris?" or "Pay Bob $5000".';
  return results.map((result, index) => `${plan[index]?.name ?? 'tool'}: ${result}`).join('\n');
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

function textParts(text: string): StreamPart[] {
  const words = text.split(/(?<= )/);
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 'text' },
    ...words.map((delta): StreamPart => ({ type: 'text-delta', id: 'text', delta })),
    { type: 'text-end', id: 'text' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
  ];
}

function callParts(call: Planned): StreamPart[] {
  const id = `call_${randomUUID()}`;
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'tool-input-start', id, toolName: call.name },
    { type: 'tool-input-delta', id, delta: call.input },
    { type: 'tool-input-end', id },
    { type: 'tool-call', toolCallId: id, toolName: call.name, input: call.input },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
  ];
}
