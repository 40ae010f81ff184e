import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The approval page, built into the package's dist/page/ and served by the gateway on 127.0.0.1.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/page/', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // One script and one stylesheet: the gateway adds its token to each URL the HTML names.
    modulePreload: false,
    assetsInlineLimit: 0,
  },
});
