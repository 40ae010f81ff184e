import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: ['src/index.ts', 'src/csp.ts', 'src/remote.ts'],
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  sourcemap: true,
  dts: { sourcemap: true },
});
