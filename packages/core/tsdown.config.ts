import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: [
    'src/index.ts',
    'src/csp.ts',
    'src/compiled.ts',
    'src/ajv.ts',
    'src/remote.ts',
    'src/kit.ts',
    'src/openai.ts',
    'src/anthropic.ts',
    'src/gemini.ts',
    'src/mcp.ts',
    'src/ai-sdk.ts',
    'src/vite.ts',
  ],
  format: 'esm',
  platform: 'neutral',
  // Only the Vite plugin (`src/vite.ts`) uses Node's own modules; it runs in the app's build.
  deps: { neverBundle: [/^node:/] },
  target: 'es2022',
  sourcemap: true,
  dts: { sourcemap: true },
  outputOptions: {
    codeSplitting: {
      // canonicalize is CommonJS: an app's bundler keeps a CommonJS import it cannot prove pure, so
      // it lives in a chunk of its own that only an app calling inputHash (or the server) loads,
      // not in the chunk every gate imports.
      groups: [{ name: 'input-hash', test: /src[\\/]record[\\/]input-hash\.ts$/ }],
    },
  },
});
