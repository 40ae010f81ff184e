// `node --import ./built-packages.mjs …`: resolves `@toolgate/<name>[/<entry>]` to that package's
// built `dist/`, as the packed packages' `publishConfig.exports` do, so the gateway's bin runs here
// exactly as users install it (in the workspace the packages' exports point at their sources).
import { register } from 'node:module';

const packages = new URL('../../', import.meta.url);
const hooks = `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  const match = /^@toolgate\\/([^/]+)(?:\\/(.+))?$/.exec(specifier);
  if (match === null) return next(specifier, context);
  const [, name, entry = 'index'] = match;
  return { url: new URL(name + '/dist/' + entry + '.js', ${JSON.stringify(packages.href)}).href, shortCircuit: true };
}`)}`;
register(hooks);
