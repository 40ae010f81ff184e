// Real HTTP on loopback for the handler's tests: the handler served by @hono/node-server's
// `getRequestListener` on 127.0.0.1, Node's `fetch` as the client, and a reader for its event feed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ToolCallRecord } from '@toolgate/core';
import type { LedgerEvent } from '../../src/index.ts';

export interface Served {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly server: Server;
  /** Connections that carried a request and are open now, as the server sees them. */
  readonly sockets: ReadonlySet<Socket>;
  /** Resolves once every connection that carried a request is closed (none left open by a feed). */
  readonly drained: () => Promise<void>;
  /** Stops listening and cuts every connection. */
  readonly close: () => Promise<void>;
}

/** Serves `handler` as Node's http and Express would: through `getRequestListener`. */
export async function serve(handler: (request: Request) => Promise<Response>): Promise<Served> {
  const listener = getRequestListener(handler);
  const server = createServer((incoming, outgoing) => void listener(incoming, outgoing));
  const sockets = new Set<Socket>();
  // Node's fetch may open a spare connection after one it aborted: only those that carried a request count.
  server.on('request', ({ socket }: { socket: Socket }) => {
    if (sockets.has(socket)) return;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    origin: `http://127.0.0.1:${port}`,
    server,
    sockets,
    async drained() {
      server.closeIdleConnections();
      await Promise.all(
        [...sockets].map(
          (socket) =>
            new Promise((resolve) => (socket.closed ? resolve(undefined) : socket.once('close', resolve))),
        ),
      );
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Request headers of a signed-in principal (the tests' `authenticate` reads `Bearer <principal>`). */
export const as = (
  principal: string | undefined,
  headers: Record<string, string> = {},
): Record<string, string> =>
  principal === undefined ? headers : { authorization: `Bearer ${principal}`, ...headers };

/** The tests' `authenticate`: the principal is the bearer token itself. */
export const bearer = (request: Request): string | null =>
  /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1] ?? null;

/** POSTs a JSON body (or the given text) and answers the status and the parsed JSON. */
export async function post(
  url: string,
  principal: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: as(principal, { 'content-type': 'application/json', ...headers }),
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

export interface FeedMessage {
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly data: unknown;
}

export interface WireMove {
  readonly event: LedgerEvent;
  readonly record: ToolCallRecord;
}

/** One client of the event feed, reading it as it arrives. */
export interface FeedClient {
  readonly response: Response;
  readonly messages: readonly FeedMessage[];
  readonly comments: readonly string[];
  /** The `move` messages' payloads, in the order they arrived. */
  readonly moves: () => WireMove[];
  /** Resolves once `check` holds; rejects when the stream ends first. */
  readonly until: (check: () => boolean) => Promise<void>;
  /** Resolves when the server ends the stream (or the client closes it). */
  readonly ended: Promise<void>;
  /** Goes away, as a closed tab does: aborts the request. */
  readonly close: () => void;
}

/** Opens `GET …/events` with Node's `fetch` and reads it with eventsource-parser. */
export async function openFeed(
  url: string,
  options: { principal?: string; lastEventId?: number | string } = {},
): Promise<FeedClient> {
  const controller = new AbortController();
  const headers = as(options.principal, { accept: 'text/event-stream' });
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const response = await fetch(url, { headers, signal: controller.signal });
  const messages: FeedMessage[] = [];
  const comments: string[] = [];
  const checks = new Set<{ check: () => boolean; resolve: () => void; reject: (error: Error) => void }>();
  let over = false;
  const changed = () => {
    for (const waiter of [...checks]) {
      if (waiter.check()) {
        checks.delete(waiter);
        waiter.resolve();
      } else if (over) {
        checks.delete(waiter);
        waiter.reject(new Error(`the feed ended first; it had sent ${messages.length} messages`));
      }
    }
  };
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      messages.push({ id: message.id, event: message.event, data: JSON.parse(message.data) as unknown });
      changed();
    },
    onComment: (comment) => {
      comments.push(comment);
      changed();
    },
  });
  const ended = (async () => {
    if (response.body === null || !response.ok) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body)
        parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {
      // aborted by close()
    }
  })().finally(() => {
    over = true;
    changed();
  });
  return {
    response,
    messages,
    comments,
    moves: () =>
      messages.filter((message) => message.event === 'move').map((message) => message.data as WireMove),
    until: (check) =>
      new Promise<void>((resolve, reject) => {
        checks.add({ check, resolve, reject });
        changed();
      }),
    ended,
    close: () => controller.abort(),
  };
}
