import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';

/** A Streamable HTTP endpoint as it runs. */
export interface HttpEndpoint {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  readonly close: () => Promise<void>;
}

/**
 * Serves `handle` at `/mcp` on 127.0.0.1. Requests naming another host, or sent by a page of
 * another origin, are refused, as the MCP spec asks of local servers (DNS rebinding).
 */
export async function serveHttp(
  port: number,
  handle: (request: Request) => Promise<Response>,
): Promise<HttpEndpoint> {
  let bound = port;
  const listener = getRequestListener(async (request) => {
    const url = new URL(request.url);
    const host = request.headers.get('host');
    if (host !== `127.0.0.1:${bound}` && host !== `localhost:${bound}`)
      return new Response('This endpoint answers only at its loopback address.', { status: 421 });
    const origin = request.headers.get('origin');
    if (origin !== null && !/^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(origin))
      return new Response('Requests from web pages of other origins are refused.', { status: 403 });
    if (url.pathname !== '/mcp') return new Response('Not found: the MCP endpoint is /mcp.', { status: 404 });
    return handle(request);
  });
  const server = createServer((req, res) => void listener(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
