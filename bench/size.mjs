#!/usr/bin/env node
// Minified + gzipped sizes of what an app ships, from the built packages, with a budget where one holds.
// Run after the packages are built. Exits non-zero when a budget is exceeded.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import reactPlugin from '@vitejs/plugin-react';
import { partsOf } from './size-parts.mjs';
import { rolldown } from 'rolldown';
import { build } from 'vite';
import { toolgate } from '../packages/core/dist/vite.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
// Entries live here so that they resolve the validators from this package's dependencies.
const work = join(here, '.size');
mkdirSync(work, { recursive: true });
const VALIDATORS = ['ajv', /^ajv\//, 'ajv-formats', '@cfworker/json-schema'];
const PEERS = ['zustand', /^zustand\//, 'react', /^react\//, 'react-dom', /^@toolgate\//];

async function gzipped(name, source, external) {
  const entry = join(work, `${name.replace(/\W+/g, '-')}.mjs`);
  writeFileSync(entry, source);
  const bundle = await rolldown({
    input: entry,
    external,
    logLevel: 'silent',
    cwd: root,
    resolve: { mainFields: ['module', 'main'] },
  });
  const { output } = await bundle.generate({ format: 'esm', minify: true });
  await bundle.close();
  const code = output.map((chunk) => (chunk.type === 'chunk' ? chunk.code : '')).join('\n');
  return { min: code.length, gz: gzipSync(code, { level: 9 }).length };
}

const core = join(root, 'packages/core/dist/index.js');
const ajv = join(root, 'packages/core/dist/ajv.js');
const react = join(root, 'packages/react/dist/index.js');
const remote = join(root, 'packages/core/dist/remote.js');
const providers = ['openai', 'anthropic', 'gemini', 'mcp', 'ai-sdk'].map((name) =>
  join(root, `packages/core/dist/${name}.js`),
);
const sseParser = join(root, 'packages/core/node_modules/eventsource-parser/dist/index.js');
const rows = [
  // What every app ships: the gate, with its JSON Schema validator left out. Reported, not
  // budgeted: the gate's checks are not traded for bytes.
  [
    '@toolgate/core: the gate, without its validator',
    `export { createToolGate, defineTool, cancel } from ${JSON.stringify(core)};`,
    [...VALIDATORS, ...PEERS],
    undefined,
  ],
  [
    '  + the OpenAI Chat stream reader, reply and tools',
    `export { createToolGate, defineTool, cancel, createContinuationGuard } from ${JSON.stringify(core)}; export { readOpenAIChatStream, openaiChatReply, openaiChatTools } from ${JSON.stringify(providers[0])};`,
    [...VALIDATORS, ...PEERS],
    undefined,
  ],
  [
    '@toolgate/core: every export (all six providers)',
    [core, ...providers].map((entry) => `export * from ${JSON.stringify(entry)};`).join(' '),
    [...VALIDATORS, ...PEERS],
    undefined,
  ],
  [
    '@toolgate/core/remote: the mirror of a server gate',
    `export { createRemoteGate } from ${JSON.stringify(remote)};`,
    PEERS,
    undefined,
  ],
  [
    '  of which eventsource-parser (the SSE reader)',
    `export { createParser } from ${JSON.stringify(sseParser)};`,
    [],
    undefined,
  ],
  // The budget covers the hooks and the whole of <ToolCallStatus>: the input its Approve binds,
  // the guard against presses that land on a replaced control, a sentence for every refusal and
  // the server connection's note. Most of its growth past 3 KB is those words, which an app
  // would otherwise have to write itself to show each refusal.
  [
    '@toolgate/react on its own',
    `export * from ${JSON.stringify(react)};`,
    [...VALIDATORS, ...PEERS],
    5 * 1024,
  ],
  [
    'validator: Ajv 2020 + ajv-formats (@toolgate/core/ajv)',
    `export { Ajv2020 } from 'ajv/dist/2020.js'; export { default } from 'ajv-formats';`,
    [],
    undefined,
  ],
  [
    'validator: @cfworker/json-schema (the default)',
    `export { Validator } from '@cfworker/json-schema';`,
    [],
    undefined,
  ],
  [
    '@toolgate/core as an app ships it (with cfworker)',
    `export { createToolGate, defineTool, cancel } from ${JSON.stringify(core)};`,
    PEERS,
    undefined,
  ],
  [
    '@toolgate/core/ajv as an app ships it (with Ajv)',
    `export { createToolGate, defineTool, cancel } from ${JSON.stringify(ajv)};`,
    PEERS,
    undefined,
  ],
];

// The parts of what toolgate adds, by where each minified byte of the app's JavaScript came from.
const PARTS = {
  'the gate (@toolgate/core)': (path) => /packages\/core\//.test(path),
  'its JSON Schema validator': (path) =>
    /node_modules\/(@cfworker\/json-schema|ajv|ajv-formats|fast-uri|fast-deep-equal|json-schema-traverse)\//.test(
      path,
    ),
  '@toolgate/react': (path) => /packages\/react\//.test(path),
};

/**
 * What users install: each `@toolgate/*` import resolved through the package's published `exports`
 * to its `dist/`, not to the workspace's TypeScript sources. `core` stands in for the file the
 * bare `@toolgate/core` names, to build the same app through another entry.
 */
function installed(core) {
  const exportsOf = (name) =>
    JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')).publishConfig.exports;
  const packages = { core: exportsOf('core'), react: exportsOf('react') };
  return {
    name: 'installed-toolgate',
    enforce: 'pre',
    resolveId(source) {
      const match = /^@toolgate\/(core|react)(\/.+)?$/.exec(source);
      if (match === null) return null;
      const [, name, sub] = match;
      if (name === 'core' && sub === undefined) return join(root, 'packages/core/dist', core);
      const target = packages[name][`.${sub ?? ''}`];
      if (target === undefined) return null;
      return join(root, 'packages', name, typeof target === 'string' ? target : target.default);
    },
  };
}

/**
 * The gzipped JavaScript and CSS a production Vite build of one app in `app/` ships, and what each
 * of {@link PARTS} and the stylesheet cost of it.
 */
async function viteApp(entry, { plugin = false, core = 'index.js' } = {}) {
  const result = await build({
    configFile: false,
    logLevel: 'silent',
    root: join(here, 'app'),
    // As the README's quick start sets Vite up: React, and toolgate's plugin when it is used.
    plugins: [reactPlugin(), ...(plugin ? [toolgate()] : []), installed(core)],
    resolve: { dedupe: ['react', 'react-dom', 'zustand'] },
    // A hidden map changes nothing in the code shipped; it only names where each byte came from.
    build: { write: false, sourcemap: 'hidden', rolldownOptions: { input: join(here, 'app', entry) } },
  });
  let gz = 0;
  const parts = Object.fromEntries([...Object.keys(PARTS), 'the stylesheet'].map((label) => [label, 0]));
  for (const file of [result].flat().flatMap((r) => r.output)) {
    if (!/\.(js|css)$/.test(file.fileName)) continue;
    const size = gzipSync(file.type === 'chunk' ? file.code : file.source, { level: 9 }).length;
    gz += size;
    if (file.type !== 'chunk') parts['the stylesheet'] += size;
    else
      for (const [label, cost] of Object.entries(partsOf(file.code, file.map, PARTS))) parts[label] += cost;
  }
  return { gz, parts };
}

/**
 * What toolgate adds to the app `npm create vite -- --template react` makes: the README's quick
 * start (a tool with a JSON Schema, a gate, `useToolCall`, `<ToolCallStatus>`, the stylesheet and
 * a Zustand store) built by Vite as a user's app is, less the same app without it.
 */
async function appRows() {
  const bare = (await viteApp('bare.jsx')).gz;
  const rows = [];
  for (const [label, options, budget] of [
    ['a default Vite + React app: what toolgate adds', { plugin: true }, 20_000],
    ['  the same without the Vite plugin (validator at runtime)', {}, undefined],
    ['  the same through @toolgate/core/ajv', { core: 'ajv.js' }, undefined],
  ]) {
    const app = await viteApp('with-toolgate.jsx', options);
    const added = app.gz - bare;
    rows.push([label, added, budget]);
    if (budget === undefined) continue;
    // Where the default app's bytes go; the rest is the validators generated at build time (they
    // land in the app's own module), zustand's hook, the quick start's own lines and what gzip
    // shares between the parts.
    const named = Object.entries(app.parts);
    for (const [part, cost] of named) rows.push([`    of which ${part}`, cost, undefined]);
    rows.push(['    of which the rest', added - named.reduce((sum, [, cost]) => sum + cost, 0), undefined]);
  }
  return rows;
}

let over = false;
console.log('\nsize: minified + gzipped (level 9)');
try {
  for (const [label, source, external, budget] of rows) {
    const { min, gz } = await gzipped(label, source, external);
    const verdict =
      budget === undefined
        ? ''
        : gz <= budget
          ? `(target ≤ ${(budget / 1024).toFixed(0)} KB) ok`
          : `(target ≤ ${(budget / 1024).toFixed(0)} KB) MISSED`;
    if (budget !== undefined && gz > budget) over = true;
    console.log(
      `${label.padEnd(58)} ${(gz / 1024).toFixed(2).padStart(6)} KB gz  ${(min / 1024).toFixed(1).padStart(6)} KB min  ${verdict}`,
    );
  }
  // kB here, as a user's build reports it (1,000 bytes): the app's JavaScript and CSS, gzipped.
  for (const [label, gz, budget] of await appRows()) {
    const verdict =
      budget === undefined ? '' : `(target ≤ ${budget / 1000} kB) ${gz <= budget ? 'ok' : 'MISSED'}`;
    if (budget !== undefined && gz > budget) over = true;
    console.log(`${label.padEnd(58)} ${(gz / 1000).toFixed(2).padStart(6)} kB gz${' '.repeat(15)}${verdict}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (over) process.exitCode = 1;
