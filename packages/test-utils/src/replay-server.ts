import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One server-sent event: `event` is the SSE event name (Responses and Anthropic use them). */
export interface SseEvent {
  readonly event?: string;
  readonly data: unknown;
}

export interface RecordedRequest {
  readonly path: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read request bodies loosely
  readonly body: any;
}

/**
 * A loopback HTTP server that answers each request with the next scripted SSE stream, the way
 * the provider would, so the official SDKs can be pointed at it. It keeps every request body.
 */
export interface ReplayServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /**
   * Queues the stream for the next request. `'[DONE]'` as data is sent verbatim. With `cutAfter`,
   * the connection is destroyed once that many events are sent, as a network cut would leave it.
   */
  readonly enqueue: (events: readonly SseEvent[], options?: { readonly cutAfter?: number }) => void;
  /** Queues a plain JSON answer for the next request. */
  readonly enqueueJson: (body: unknown) => void;
  readonly close: () => Promise<void>;
}

export async function startReplayServer(): Promise<ReplayServer> {
  const queue: (
    | { kind: 'sse'; events: readonly SseEvent[]; cutAfter: number | undefined }
    | { kind: 'json'; body: unknown }
  )[] = [];
  const requests: RecordedRequest[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((text) => {
      requests.push({ path: request.url ?? '', body: text === '' ? undefined : JSON.parse(text) });
      const next = queue.shift();
      if (next === undefined) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'no scripted response left' } }));
        return;
      }
      if (next.kind === 'json') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(next.body));
        return;
      }
      response.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      const events = next.cutAfter === undefined ? next.events : next.events.slice(0, next.cutAfter);
      const body = events
        .map(
          (event) =>
            `${event.event === undefined ? '' : `event: ${event.event}\n`}data: ${event.data === '[DONE]' ? '[DONE]' : JSON.stringify(event.data)}\n\n`,
        )
        .join('');
      if (next.cutAfter === undefined) response.end(body);
      // Once the events are on the wire, the connection drops without the stream's end.
      else response.write(body, () => response.socket?.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (events, options) => queue.push({ kind: 'sse', events, cutAfter: options?.cutAfter }),
    enqueueJson: (body) => queue.push({ kind: 'json', body }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
