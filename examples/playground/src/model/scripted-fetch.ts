import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { SSE_DONE, sseFrame, turnChunks } from './chat-chunks.ts';
import { scriptedTurn } from './scripted-model.ts';
import { pause } from '../shop/tool-timing.ts';

/** How the scripted model paces its stream. `instant` sends everything as fast as the page can take it. */
export type ScriptedPace = 'realistic' | 'instant';

export const SCRIPTED_MODEL = 'toolgate-scripted';

/** SSE frames sent per batch when instant; the stream yields to other work between batches. */
const INSTANT_BATCH = 24;

/**
 * A `fetch` that answers `POST …/chat/completions` the way an OpenAI-compatible server does, from
 * the scripted model. Handing it to the `openai` SDK as its `fetch` sends the offline mode through
 * exactly the path a real model takes: the SDK's SSE parser, the stream reader, the gate.
 */
export function createScriptedFetch(pace: ScriptedPace): typeof fetch {
  let completions = 0;
  return (input, init) => Promise.resolve(respond(input, init));

  function respond(input: RequestInfo | URL, init: RequestInit | undefined): Response {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.endsWith('/chat/completions') || init?.method !== 'POST' || typeof init.body !== 'string') {
      return json(404, {
        error: {
          message: `the scripted model only serves POST /chat/completions (got ${init?.method ?? 'GET'} ${url})`,
          type: 'invalid_request_error',
        },
      });
    }
    const request = JSON.parse(init.body) as ChatCompletionCreateParams;
    if (request.stream !== true) {
      return json(400, {
        error: {
          message: 'the scripted model streams only; pass stream: true',
          type: 'invalid_request_error',
        },
      });
    }
    const turn = scriptedTurn(request.messages);
    const chunks = turnChunks(turn, {
      completionId: `chatcmpl-scripted-${++completions}`,
      model: SCRIPTED_MODEL,
      created: Math.floor(Date.now() / 1000),
    });
    const frames = [...chunks.map(sseFrame), SSE_DONE];
    const toolFrames = chunks.filter((chunk) => chunk.choices[0]?.delta.tool_calls !== undefined).length;
    const signal = init.signal ?? undefined;
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (pace === 'instant') {
          await pause(0, signal);
          const end = Math.min(frames.length, next + INSTANT_BATCH);
          controller.enqueue(encoder.encode(frames.slice(next, end).join('')));
          next = end;
        } else {
          // A word of text every 28 ms; tool-call fragments every 10 ms, several at a time when a turn
          // has many calls, so that even a flood streams in about a second and a half.
          const isTool = (frame: string | undefined) => frame?.includes('"tool_calls"') === true;
          await pause(next === 0 ? 350 : isTool(frames[next]) ? 10 : 28, signal);
          const end = isTool(frames[next])
            ? Math.min(frames.length, next + Math.ceil(toolFrames / 150))
            : next + 1;
          let batch = '';
          for (; next < end && (batch === '' || isTool(frames[next])); next++)
            batch += frames[next] as string;
          controller.enqueue(encoder.encode(batch));
        }
        if (next >= frames.length) controller.close();
      },
    });
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8' },
    });
  }
}

const encoder = new TextEncoder();

function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
}
