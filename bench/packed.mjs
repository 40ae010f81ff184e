// Module resolution hooks for benches that load a package which imports another of this
// workspace: `@toolgate/<name>[/<entry>]` resolves to that package's built `dist/`, as it does in the
// packed packages (their `publishConfig.exports`), not to its TypeScript sources.
// Register before importing: `register('./packed.mjs', import.meta.url)`.
const packages = new URL('../packages/', import.meta.url);

export async function resolve(specifier, context, next) {
  const match = /^@toolgate\/([^/]+)(?:\/(.+))?$/.exec(specifier);
  if (match === null) return next(specifier, context);
  const [, name, entry = 'index'] = match;
  return { url: new URL(`${name}/dist/${entry}.js`, packages).href, shortCircuit: true };
}
