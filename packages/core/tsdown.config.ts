import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: [
    'src/index.ts',
    'src/csp.ts',
    'src/ajv.ts',
    'src/remote.ts',
    'src/kit.ts',
    'src/openai.ts',
    'src/anthropic.ts',
    'src/gemini.ts',
    'src/mcp.ts',
    'src/ai-sdk.ts',
  ],
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  sourcemap: true,
  dts: { sourcemap: true },
});
