#!/usr/bin/env node
// The playground in one local process: the page and the API on one origin.
//
//   node server.mjs                 Vite in middleware mode serves the page (with hot reload)
//   node server.mjs --production    the built page in dist/ (run `vite build` first)
//
// Either way, everything under /api/ is the playground's server (src/server/), loaded through
// Vite's module runner because it is TypeScript and Node 20 runs only JavaScript.
//
// Environment: PORT (5173; 0 picks a free one), HOST (127.0.0.1), PLAYGROUND_LEDGER (the SQLite
// file, default .data/playground.db here), PLAYGROUND_TRANSFER_HOLD_MS, PLAYGROUND_LEASE_MS,
// PLAYGROUND_TEST_HOOKS=1 (the end-to-end tests' hooks).
import { getRequestListener } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import { mkdirSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer as createViteServer, createServerModuleRunner } from 'vite';
import { listenLocally } from '../shared/local-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const production = process.argv.includes('--production');
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 5173);
const ledgerPath = resolve(process.env.PLAYGROUND_LEDGER ?? resolve(here, '.data/playground.db'));
const number = (name) => (process.env[name] === undefined ? undefined : Number(process.env[name]));

// The port first: with it taken, the playground is likely running already, on this same ledger.
// The API takes messages of 4,000 characters and small decisions; 1 MiB is far above either.
const local = await listenLocally({ name: 'toolgate playground', host, port, bodyLimitBytes: 1024 * 1024 });
mkdirSync(dirname(ledgerPath), { recursive: true });
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
const { createPlaygroundServer } = await runner.import(resolve(here, 'src/server/playground-server.ts'));
const playground = await createPlaygroundServer({
  ledgerPath,
  publicUrl: `http://${host.includes(':') ? `[${host}]` : host}:${local.port}`,
  transferHoldMs: number('PLAYGROUND_TRANSFER_HOLD_MS'),
  leaseMs: number('PLAYGROUND_LEASE_MS'),
  smtpUrl: process.env.PLAYGROUND_SMTP_URL || undefined,
  testHooks: process.env.PLAYGROUND_TEST_HOOKS === '1',
});
local.stopOnSignals(async () => {
  await playground.close();
  await runner.close();
  await vite.close();
});

const api = getRequestListener(playground.fetch);
let pages = vite.middlewares;
if (production) {
  const dist = relative(process.cwd(), resolve(here, 'dist')) || '.';
  const site = new Hono();
  site.use('/*', serveStatic({ root: dist }));
  site.get('*', serveStatic({ path: `${dist}/index.html` }));
  pages = getRequestListener(site.fetch);
}
local.serve((request, response) =>
  request.url?.startsWith('/api/') ? api(request, response) : pages(request, response),
);

const shown = relative(process.cwd(), ledgerPath);
console.log(
  `toolgate playground: http://${host}:${local.port} (ledger ${shown.startsWith('..') ? ledgerPath : shown}${production ? ', production build' : ''})`,
);
