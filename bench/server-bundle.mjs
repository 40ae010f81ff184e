// Bundles the built @toolgate/server with the built @toolgate/core into one module for the
// benches: in the workspace, @toolgate/core's own exports point at its TypeScript sources, which
// Node cannot load. The drivers and the server's dependencies stay external, resolved from here.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

/** Writes `.tools/server.mjs` (and `.tools/core-remote.mjs`) and returns the server bundle's path. */
export async function bundleServer() {
  const out = join(here, '.tools');
  mkdirSync(out, { recursive: true });
  const bundle = await rolldown({
    input: { server: join(root, 'packages/server/dist/index.js'), 'core-remote': join(root, 'packages/core/dist/remote.js') },
    external: ['better-sqlite3', 'pg', 'kysely', 'canonicalize', '@opentelemetry/api', /^node:/, 'ajv', /^ajv\//, 'ajv-formats', '@cfworker/json-schema', 'eventsource-parser', /^eventsource-parser\//, 'zustand', /^zustand\//],
    resolve: { alias: { '@toolgate/core': join(root, 'packages/core/dist/index.js') } },
    platform: 'node',
    logLevel: 'silent',
  });
  await bundle.write({ dir: out, format: 'esm', entryFileNames: '[name].mjs' });
  await bundle.close();
  return join(out, 'server.mjs');
}
