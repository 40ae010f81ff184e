import { fileURLToPath } from 'node:url';
import { build, type Rollup } from 'vite';

const src = fileURLToPath(new URL('../src/', import.meta.url));

/**
 * A Vite production build, in memory, of the app in `root`, with `@toolgate/react` and its
 * stylesheet taken from this package's source: what `vite build` gives a new app, by path.
 *
 * @example
 * const files = await buildApp(fileURLToPath(new URL('./app/', import.meta.url)));
 * const html = files.get('/index.html');
 */
export async function buildApp(root: string): Promise<Map<string, string | Uint8Array>> {
  const result = await build({
    configFile: false,
    logLevel: 'silent',
    root,
    resolve: {
      alias: [
        { find: /^@toolgate\/react$/, replacement: `${src}index.ts` },
        { find: /^@toolgate\/react\/styles\.css$/, replacement: `${src}styles.css` },
      ],
      dedupe: ['react', 'react-dom', 'zustand'],
    },
    build: { write: false },
  });
  const files = new Map<string, string | Uint8Array>();
  for (const output of [result as Rollup.RollupOutput | Rollup.RollupOutput[]].flat())
    for (const file of output.output)
      files.set(`/${file.fileName}`, file.type === 'chunk' ? file.code : file.source);
  return files;
}

/**
 * The content type a built file is served with.
 *
 * @example
 * contentType('/assets/index.js'); // 'text/javascript'
 */
export function contentType(path: string): string {
  if (path.endsWith('.js')) return 'text/javascript';
  return path.endsWith('.css') ? 'text/css' : 'text/html';
}
