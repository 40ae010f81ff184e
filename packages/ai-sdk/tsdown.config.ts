import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: { index: 'src/index.ts', 'react/index': 'src/react/index.ts' },
  format: 'esm',
  platform: 'neutral',
  fixedExtension: false,
  target: 'es2022',
  sourcemap: true,
  dts: { sourcemap: true },
});
