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
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer as createViteServer, createServerModuleRunner } from 'vite';
import { listenLocally } from '../shared/local-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const production = process.argv.includes('--production');
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 5174);
process.env.AI_SDK_CHAT_LEDGER = resolve(
  process.env.AI_SDK_CHAT_LEDGER ?? resolve(here, '.data/ai-sdk-chat.db'),
);

// The port first: with it taken, the example is likely running already, on this same ledger.
// useChat sends the whole conversation with each message; 4 MiB holds a long one.
const local = await listenLocally({
  name: 'toolgate ai-sdk-chat',
  host,
  port,
  bodyLimitBytes: 4 * 1024 * 1024,
});
const vite = await createViteServer({
  root: here,
  configFile: production ? false : resolve(here, 'vite.config.ts'),
  appType: production ? 'custom' : 'spa',
  logLevel: production ? 'warn' : 'info',
  server: production
    ? { middlewareMode: true, hmr: false, ws: false, watch: null }
    : { middlewareMode: true, ws: { server: local.http } },
});
const runner = createServerModuleRunner(vite.environments.ssr, { hmr: false });
const { createApp } = await runner.import(resolve(here, 'src/server/app.ts'));
const app = createApp();
local.stopOnSignals(async () => {
  await app.close();
  await runner.close();
  await vite.close();
});

const api = getRequestListener(app.fetch);
let pages = vite.middlewares;
if (production) {
  const dist = relative(process.cwd(), resolve(here, 'dist')) || '.';
  const site = new Hono();
  site.use('/*', serveStatic({ root: dist }));
  site.get('*', serveStatic({ path: `${dist}/index.html` }));
  pages = getRequestListener(site.fetch);
}
local.serve((request, response) => {
  // The demo's sign-in: each new visitor gets a random user id. A real app has its own.
  if (!/(?:^|;\s*)uid=/.test(request.headers.cookie ?? ''))
    response.setHeader('set-cookie', `uid=${randomUUID()}; Path=/; HttpOnly; SameSite=Strict`);
  return request.url?.startsWith('/api/') ? api(request, response) : pages(request, response);
});

const shown = relative(process.cwd(), process.env.AI_SDK_CHAT_LEDGER);
console.log(
  `toolgate ai-sdk-chat: http://${host}:${local.port} (ledger ${shown.startsWith('..') ? process.env.AI_SDK_CHAT_LEDGER : shown}, ${process.env.OPENAI_API_KEY ? `model ${process.env.OPENAI_MODEL ?? 'gpt-4o-mini'}` : 'scripted model'}${production ? ', production build' : ''})`,
);
