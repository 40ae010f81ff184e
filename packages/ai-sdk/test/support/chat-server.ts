import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { ServerGate } from '@toolgate/server';
import { convertToModelMessages, stepCountIs, streamText, type LanguageModel } from 'ai';
import { toolgateChat } from '../../src/index.ts';

export interface ChatServer {
  readonly url: string;
  /** The model the next requests use. */
  model: LanguageModel;
  /** The gate the next requests use (a test swaps it to play a restart). */
  gate: ServerGate;
  /** What the route threw, as the server's log would show it. */
  readonly errors: unknown[];
  readonly close: () => Promise<void>;
}

export interface ChatServerOptions {
  /** Left on streamText beside toolgate, as an app adopting it might. */
  readonly approvalSecret?: string;
}

/**
 * The AI SDK's chat route, adopted with toolgate, on a real port. The principal is the `x-user`
 * header, standing in for the app's session cookie.
 */
export async function startChatServer(
  gate: ServerGate,
  model: LanguageModel,
  options: ChatServerOptions = {},
): Promise<ChatServer> {
  const state = { gate, model, errors: [] as unknown[] };
  const handler = async (request: Request): Promise<Response> => {
    try {
      return await route(request);
    } catch (error) {
      state.errors.push(error);
      return new Response('Internal Server Error', { status: 500 });
    }
  };
  const route = async (request: Request): Promise<Response> => {
    const user = request.headers.get('x-user');
    if (user === null || user === '') return new Response('who are you?', { status: 401 });
    const body = (await request.json()) as { id: string; messages: never[] };
    const chat = toolgateChat(state.gate, { session: body.id, principal: user });
    const result = streamText({
      model: state.model,
      tools: chat.tools,
      messages: await convertToModelMessages(await chat.messages(body.messages)),
      stopWhen: stepCountIs(5),
      ...(options.approvalSecret === undefined
        ? {}
        : { experimental_toolApprovalSecret: options.approvalSecret }),
    });
    return chat.toUIMessageStreamResponse(result);
  };
  const listener = getRequestListener(handler);
  const server: Server = createServer((incoming, outgoing) => void listener(incoming, outgoing));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/api/chat`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  });
}
