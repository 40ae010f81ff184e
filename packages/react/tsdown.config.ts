import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: ['src/index.ts', 'src/tool-call-status-parts.ts'],
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  sourcemap: true,
  dts: { sourcemap: true },
  copy: [{ from: 'src/styles.css', to: 'dist' }],
  // Hooks and components run only on the client; frameworks with server components need the marker.
  banner: { js: "'use client';" },
});
