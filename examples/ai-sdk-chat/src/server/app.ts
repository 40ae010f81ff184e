import { Hono } from 'hono';
import { POST } from './route.ts';
import { close, signedInUser } from './toolgate.ts';

/**
 * The example's API: POST /api/chat is the AI SDK's chat route, for a signed-in visitor only
 * (server.mjs signs each new visitor in with a random id in an HttpOnly cookie).
 */
export function createApp(): {
  readonly fetch: (request: Request) => Response | Promise<Response>;
  readonly close: () => Promise<void>;
} {
  const app = new Hono();
  app.use('/api/*', async (c, next) => {
    if (signedInUser(c.req.raw) === undefined)
      return c.json(
        { error: { code: 'unauthenticated', message: 'Open the page first: it signs you in.' } },
        401,
      );
    await next();
  });
  app.post('/api/chat', (c) => POST(c.req.raw));
  return { fetch: app.fetch, close };
}
