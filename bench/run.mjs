#!/usr/bin/env node
// Builds @toolgate/core, @toolgate/server and @toolgate/mcp, then runs every `*.bench.mjs` here against the built
// output, one after another, so each measures what users install. Pass names to run only some:
// `pnpm bench gate`.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const only = process.argv.slice(2);

const build = spawnSync(
  'node',
  [
    join(root, 'scripts/pnpm.mjs'),
    '--filter',
    '@toolgate/core',
    '--filter',
    '@toolgate/server',
    '--filter',
    '@toolgate/mcp',
    'run',
    'build',
  ],
  {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  },
);
if (build.status !== 0) process.exit(build.status ?? 1);

const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => only.length === 0 || only.some((name) => f.includes(name)))
  .sort();
let failed = false;
if (only.length === 0 || only.some((name) => 'size'.includes(name))) {
  // Sizes are exact, not timed; the React package is built for them too.
  const react = spawnSync(
    'node',
    [join(root, 'scripts/pnpm.mjs'), '--filter', '@toolgate/react', 'run', 'build'],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const size =
    react.status === 0 ? spawnSync('node', [join(here, 'size.mjs')], { cwd: here, stdio: 'inherit' }) : react;
  if (size.status !== 0) failed = true;
}
for (const file of files) {
  // Each bench in its own process: one bench's garbage and JIT state must not skew the next.
  const result = spawnSync('node', ['--expose-gc', join(here, file)], { cwd: here, stdio: 'inherit' });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
