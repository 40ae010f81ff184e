#!/usr/bin/env node
// The example in one local process: the page and the chat route on one origin.
//
//   node server.mjs                 Vite in middleware mode serves the page (with hot reload)
//   node server.mjs --production    the built page in dist/ (run `vite build` first)
//
// Everything under /api/ is the example's server (src/server/), loaded through Vite's module
// runner because it is TypeScript and Node 20 runs only JavaScript.
//
// Environment: PORT (5174; 0 picks a free one), HOST (127.0.0.1), AI_SDK_CHAT_LEDGER (the SQLite
// file, default .data/ai-sdk-chat.db here), OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL (a real
// OpenAI-compatible model instead of the scripted one).
import { getRequestListener } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer as createViteServer, createServerModuleRunner } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
const production = process.argv.includes('--production');
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 5174);
process.env.AI_SDK_CHAT_LEDGER = resolve(process.env.AI_SDK_CHAT_LEDGER ?? resolve(here, '.data/ai-sdk-chat.db'));

const http = createServer();
const vite = await createViteServer({
  root: here,
  configFile: production ? false : resolve(here, 'vite.config.ts'),
  appType: production ? 'custom' : 'spa',
  logLevel: production ? 'warn' : 'info',
  server: production ? { middlewareMode: true, hmr: false, ws: false, watch: null } : { middlewareMode: true, ws: { server: http } },
});
const runner = createServerModuleRunner(vite.environments.ssr, { hmr: false });
const { createApp } = await runner.import(resolve(here, 'src/server/app.ts'));
const app = createApp();

const api = getRequestListener(app.fetch);
let pages = vite.middlewares;
if (production) {
  const dist = relative(process.cwd(), resolve(here, 'dist')) || '.';
  const site = new Hono();
  site.use('/*', serveStatic({ root: dist }));
  site.get('*', serveStatic({ path: `${dist}/index.html` }));
  pages = getRequestListener(site.fetch);
}
http.on('request', (request, response) => {
  // The demo's sign-in: each new visitor gets a random user id. A real app has its own.
  if (!/(?:^|;\s*)uid=/.test(request.headers.cookie ?? '')) response.setHeader('set-cookie', `uid=${randomUUID()}; Path=/; HttpOnly; SameSite=Strict`);
  return request.url?.startsWith('/api/') ? api(request, response) : pages(request, response);
});

await new Promise((done, fail) => {
  http.once('error', fail);
  http.listen(port, host, done);
});
const shown = relative(process.cwd(), process.env.AI_SDK_CHAT_LEDGER);
const address = http.address();
console.log(`toolgate ai-sdk-chat: http://${host}:${address.port} (ledger ${shown.startsWith('..') ? process.env.AI_SDK_CHAT_LEDGER : shown}, ${process.env.OPENAI_API_KEY ? `model ${process.env.OPENAI_MODEL ?? 'gpt-4o-mini'}` : 'scripted model'}${production ? ', production build' : ''})`);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  http.closeAllConnections();
  await new Promise((done) => http.close(done));
  await app.close();
  await runner.close();
  await vite.close();
  process.exit(0);
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
