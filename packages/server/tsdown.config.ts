import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: ['src/index.ts', 'src/schema.ts'],
  format: 'esm',
  platform: 'node',
  fixedExtension: false,
  target: 'node20',
  sourcemap: true,
  dts: { sourcemap: true },
});
