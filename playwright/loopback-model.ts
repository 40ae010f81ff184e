import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for a real model server on 127.0.0.1 that speaks the OpenAI Chat Completions
 * streaming protocol (SSE `chat.completion.chunk`s, `data: [DONE]`, CORS for a browser client).
 * Written independently of the playground's scripted model, so that the real-model mode is
 * tested against a server it shares no code with.
 *
 * First answer to a user message: three parallel `add_to_cart` calls whose argument fragments
 * arrive interleaved, the third with malformed JSON. Answer to the tool messages: a sentence
 * naming each result it received, so a test can read what the browser sent back.
 *
 * A user message with `[cut]` in it gets a `transfer_funds` call whose arguments stop halfway,
 * and then the connection is destroyed; with `[hold]`, the stream stops halfway through the
 * arguments and stays open until the client goes away. With `[status 401]` (or any other status
 * code) in it, the server answers that HTTP error with an OpenAI-style error body instead.
 */
export interface LoopbackModel {
  readonly url: string;
  readonly requests: () => readonly LoggedRequest[];
  readonly close: () => Promise<void>;
}

export interface LoggedRequest {
  readonly authorization: string | undefined;
  readonly body: ChatRequest;
}

interface ChatMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_call_id?: string;
  readonly tool_calls?: readonly { id: string; function: { name: string; arguments: string } }[];
}

interface ChatRequest {
  readonly model: string;
  readonly stream?: boolean;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly { type: string; function: { name: string } }[];
}

export const LOOPBACK_MODEL = 'loopback-7b';

/** The calls of the first turn, as the server writes them (the third is not valid JSON). */
export const LOOPBACK_CALLS = [
  { suffix: 'tee', name: 'add_to_cart', arguments: '{"sku": "tee", "quantity": 1}' },
  { suffix: 'map', name: 'add_to_cart', arguments: '{"sku": "map", "quantity": 2}' },
  { suffix: 'beanie', name: 'add_to_cart', arguments: '{"sku": "beanie", "quantity": 1' },
] as const;

/** The error bodies answered for `[status …]`, worded as OpenAI's API words them (the 500's is long, as some gateways' are). */
export const PROVIDER_ERRORS: Readonly<
  Record<number, { message: string; type: string; code: string | null }>
> = {
  401: {
    message:
      'Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.',
    type: 'invalid_request_error',
    code: 'invalid_api_key',
  },
  500: {
    message: `The server had an error while processing your request. Sorry about that! ${'Upstream trace: worker 7 stalled on shard 3. '.repeat(12)}`,
    type: 'server_error',
    code: null,
  },
};

export async function startLoopbackModel(): Promise<LoopbackModel> {
  const log: LoggedRequest[] = [];
  const server = createServer((request, response) => {
    handle(request, response, log).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: String(error) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: () => log,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  log: LoggedRequest[],
): Promise<void> {
  const cors = {
    'access-control-allow-origin': request.headers.origin ?? '*',
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    'access-control-allow-headers': request.headers['access-control-request-headers'] ?? '*',
    'access-control-max-age': '600',
  };
  if (request.method === 'OPTIONS') {
    response.writeHead(204, cors);
    response.end();
    return;
  }
  if (request.method === 'GET' && request.url === '/__requests') {
    response.writeHead(200, { ...cors, 'content-type': 'application/json' });
    response.end(JSON.stringify(log));
    return;
  }
  if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
    response.writeHead(404, { ...cors, 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        error: {
          message: `no route ${request.method ?? ''} ${request.url ?? ''}`,
          type: 'invalid_request_error',
        },
      }),
    );
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
  log.push({ authorization: request.headers.authorization, body });
  if (body.stream !== true) {
    response.writeHead(400, { ...cors, 'content-type': 'application/json' });
    response.end(
      JSON.stringify({ error: { message: 'this server only streams', type: 'invalid_request_error' } }),
    );
    return;
  }

  const lastUser = body.messages.findLastIndex((message) => message.role === 'user');
  const content = body.messages[lastUser]?.content;
  const said = typeof content === 'string' ? content : JSON.stringify(content ?? '');
  const failing = /\[status (\d{3})\]/.exec(said);
  if (failing !== null) {
    const status = Number(failing[1]);
    response.writeHead(status, { ...cors, 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        error: PROVIDER_ERRORS[status] ?? {
          message: `loopback error ${status}`,
          type: 'server_error',
          code: null,
        },
      }),
    );
    return;
  }

  response.writeHead(200, {
    ...cors,
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const id = `chatcmpl-loop${log.length}`;
  const created = Math.floor(Date.now() / 1000);
  const send = async (choice: object | null, usage?: object) => {
    const chunk = {
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      choices: choice === null ? [] : [{ index: 0, logprobs: null, finish_reason: null, ...choice }],
      ...(usage ? { usage } : {}),
    };
    response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  };

  await send({ delta: { role: 'assistant', content: '' } });
  const replies = body.messages.slice(lastUser + 1).filter((message) => message.role === 'tool');
  if (replies.length === 0 && /\[(cut|hold)\]/.test(said)) {
    await send({ delta: { content: 'Sending it now.' } });
    await send({
      delta: {
        tool_calls: [
          {
            index: 0,
            id: `call_${body.messages.length}cut`,
            type: 'function',
            function: { name: 'transfer_funds', arguments: '' },
          },
        ],
      },
    });
    await send({
      delta: { tool_calls: [{ index: 0, function: { arguments: '{"to": "sam@example.com", "amount_' } }] },
    });
    // Cut inside the call's arguments: the socket goes, with no finish_reason and no [DONE].
    if (said.includes('[cut]')) response.destroy();
    else await new Promise((resolve) => response.once('close', resolve));
    return;
  }
  if (replies.length === 0) {
    for (const word of ['Adding ', 'a tee, ', 'two maps ', 'and a beanie.'])
      await send({ delta: { content: word } });
    const ids = LOOPBACK_CALLS.map((call) => `call_${body.messages.length}${call.suffix}`);
    for (const [index, call] of LOOPBACK_CALLS.entries()) {
      await send({
        delta: {
          tool_calls: [
            { index, id: ids[index], type: 'function', function: { name: call.name, arguments: '' } },
          ],
        },
      });
    }
    // Parallel calls' fragments interleaved by index, as some gateways send them.
    const fragments = LOOPBACK_CALLS.map((call) => call.arguments.match(/.{1,7}/gs) ?? []);
    for (let step = 0; step < Math.max(...fragments.map((list) => list.length)); step++) {
      for (const [index, list] of fragments.entries()) {
        const text = list[step];
        if (text !== undefined)
          await send({ delta: { tool_calls: [{ index, function: { arguments: text } }] } });
      }
    }
    await send({ delta: {}, finish_reason: 'tool_calls' });
  } else {
    const summary = replies
      .map((reply) => {
        const content = typeof reply.content === 'string' ? reply.content : JSON.stringify(reply.content);
        const code = /\((invalid_json|invalid_arguments|unknown_tool|[a-z_]+)\)/.exec(content)?.[1];
        return `${reply.tool_call_id ?? '?'} ${content.startsWith('{') ? 'ok' : `refused (${code ?? 'no code'})`}`;
      })
      .join(', ');
    for (const word of [`I received ${replies.length} results: `, summary, '.'])
      await send({ delta: { content: word } });
    await send({ delta: {}, finish_reason: 'stop' });
  }
  await send(null, { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160 });
  response.end('data: [DONE]\n\n');
}
