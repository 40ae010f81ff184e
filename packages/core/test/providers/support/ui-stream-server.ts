import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback chat endpoint, as an app serves one for `useChat`: each POST answers with the next
 * queued `Response` (the AI SDK's `result.toUIMessageStreamResponse()`), copied to the socket
 * chunk by chunk. With `cutAfter`, the connection is destroyed after that many chunks (one UI
 * message chunk each), as a network cut would leave it.
 */
export interface UiStreamServer {
  readonly url: string;
  readonly enqueue: (response: () => Response, options?: { readonly cutAfter?: number }) => void;
  readonly close: () => Promise<void>;
}

export async function startUiStreamServer(): Promise<UiStreamServer> {
  const queue: { response: () => Response; cutAfter: number | undefined }[] = [];
  const server = createServer((request, socket) => {
    void drain(request).then(async () => {
      const next = queue.shift();
      if (next === undefined) {
        socket.writeHead(500).end();
        return;
      }
      const response = next.response();
      socket.writeHead(response.status, Object.fromEntries(response.headers));
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      for (let sent = 0; ; sent++) {
        if (sent === next.cutAfter) {
          await reader.cancel();
          socket.socket?.destroy();
          return;
        }
        const { done, value } = await reader.read();
        if (done) break;
        await new Promise<void>((resolve) => socket.write(value, () => resolve()));
      }
      socket.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    enqueue: (response, options) => queue.push({ response, cutAfter: options?.cutAfter }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function drain(request: IncomingMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    request.on('data', () => undefined);
    request.on('end', resolve);
    request.on('error', reject);
  });
}
