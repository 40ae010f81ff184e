#!/usr/bin/env node
// Runs a TypeScript module of this package in a process of its own (Node 20 cannot strip types):
// `node test/support/run-ts.mjs <module.ts> [args...]`. Vite's module runner compiles the sources
// the way the tests see them; dependencies load from node_modules as they are.
import { resolve } from 'node:path';
import { createServer, createServerModuleRunner } from 'vite';

const [file, ...args] = process.argv.slice(2);
if (!file) throw new Error('usage: run-ts.mjs <module.ts> [args...]');
process.argv = [process.argv[0], resolve(file), ...args];

const server = await createServer({
  configFile: false,
  root: resolve(import.meta.dirname, '../..'),
  logLevel: 'silent',
  appType: 'custom',
  server: { middlewareMode: true, hmr: false, ws: false, watch: null },
});
const runner = createServerModuleRunner(server.environments.ssr, { hmr: false });
try {
  await runner.import(resolve(file));
} finally {
  await runner.close();
  await server.close();
}
