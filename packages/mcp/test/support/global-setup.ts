import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The gateway's bin, bundled from its sources with the approval page beside it. */
    gatewayBin: string;
  }
}

const packageRoot = fileURLToPath(new URL('../..', import.meta.url));
// Inside the package, so the bundle's dependencies (the SDK, the database drivers) resolve from its node_modules.
const outDir = fileURLToPath(
  new URL(`../../node_modules/.cache/toolgate-mcp-test-${process.pid}/`, import.meta.url),
);

/**
 * Bundles `src/bin.ts` (with the workspace packages it imports) and builds the approval page next
 * to it, once for the whole run: every test then starts the gateway as a real process in a
 * fraction of a second.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  await build({
    configFile: false,
    root: packageRoot,
    logLevel: 'warn',
    build: {
      ssr: fileURLToPath(new URL('../../src/bin.ts', import.meta.url)),
      outDir,
      emptyOutDir: true,
      minify: false,
      target: 'node20',
      rollupOptions: { output: { entryFileNames: 'bin.mjs' } },
    },
    ssr: { noExternal: [/^@toolgate\//] },
  });
  await build({
    configFile: fileURLToPath(new URL('../../page/vite.config.ts', import.meta.url)),
    logLevel: 'warn',
    build: { outDir: `${outDir}page/`, emptyOutDir: true },
  });
  project.provide('gatewayBin', `${outDir}bin.mjs`);
  return () => rmSync(outDir, { recursive: true, force: true });
}
