import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type MagicString from 'magic-string';
import type { Plugin } from 'vite';
import { BUILD_TIME_VALIDATOR } from './schema/build-time.ts';
import { generateValidator } from './schema/generate.ts';
import { literalSchemas, type Node } from './schema/literal-schemas.ts';
import type { JsonSchemaCompilerOptions } from './schema/schema.ts';
import type { JsonSchemaObject } from './schema/tool-schema.ts';

/**
 * What the Vite plugin of `@toolgate/core/vite` is told.
 *
 * @example
 * const options: ToolgateViteOptions = { runtimeSchemas: true };
 */
export interface ToolgateViteOptions extends JsonSchemaCompilerOptions {
  /**
   * Keep a JSON Schema validator in the app for the schemas the plugin cannot compile (made at
   * runtime, imported from another module, or referring to a schema by URI). Off by default: the
   * app ships no validator, and such a tool is unavailable until its schema is written where the
   * plugin can read it.
   */
  readonly runtimeSchemas?: boolean;
}

/**
 * A Vite plugin that compiles each tool's JSON Schema into a validator when the app is built, so
 * that the app ships small generated code instead of a JSON Schema validator (about 9 kB less,
 * gzipped, for a typical app). It reads every `defineTool({ ... })` whose `inputSchema` or
 * `outputSchema` is written as a literal, or is a `const` of the same module holding one, and
 * generates its check with Ajv (the same decisions and issues as the runtime Ajv, no `eval`).
 * Schemas it cannot read fall to the runtime validator when `runtimeSchemas` is on; otherwise
 * their tools are unavailable, and `gate.check()` says why.
 *
 * @example
 * // vite.config.js
 * import react from '@vitejs/plugin-react';
 * import { toolgate } from '@toolgate/core/vite';
 * export default { plugins: [react(), toolgate()] };
 */
export function toolgate(options: ToolgateViteOptions = {}): Plugin[] {
  const runtime = options.runtimeSchemas === true;
  return [
    {
      name: 'toolgate:gate',
      enforce: 'pre',
      config: () =>
        runtime
          ? undefined
          : // Pre-bundled, a dependency's import of `@toolgate/core` would not come through here.
            { optimizeDeps: { exclude: ['@toolgate/core'], include: ['@toolgate/core > canonicalize'] } },
      resolveId(source, importer, resolveOptions) {
        if (source.startsWith(CJS_PUBLIC)) return CJS + source.slice(CJS_PUBLIC.length);
        if (runtime || source !== '@toolgate/core') return null;
        return this.resolve('@toolgate/core/compiled', importer, { ...resolveOptions, skipSelf: true });
      },
      load: (id) => (id.startsWith(CJS) ? commonJsAsModule(id.slice(CJS.length)) : null),
    },
    {
      name: 'toolgate:schemas',
      async transform(code, id) {
        if (id.startsWith('\0') || id.includes('/node_modules/') || !SOURCE.test(id.split('?')[0] ?? id))
          return null;
        if (!code.includes('defineTool') || !code.includes('@toolgate/core')) return null;
        const found = literalSchemas(this.parse(code) as unknown as Node);
        if (found.length === 0) return null;
        const out = new (await magicString())(code);
        const module = { validators: new Map<string, string>(), imports: new Map<string, string>() };
        for (const { node, value, shorthand } of found) {
          let validator;
          try {
            validator = validatorOf(value, options, module);
          } catch (error) {
            const why = `toolgate: the schema at ${id}:${node.start} does not compile: ${error instanceof Error ? error.message : String(error)}`;
            if (!runtime) this.error(why);
            this.warn(why);
            continue;
          }
          const written = code.slice(node.start, node.end);
          const wrapped = `/* @__PURE__ */ ${ATTACH}(${written}, ${validator})`;
          out.overwrite(node.start, node.end, shorthand ? `${written}: ${wrapped}` : wrapped);
        }
        if (module.validators.size === 0) return null;
        out.prepend(preludeOf(module));
        return { code: out.toString(), map: out.generateMap({ hires: 'boundary', source: id }) };
      },
    },
  ];
}

const SOURCE = /\.[cm]?[jt]sx?$/;

// An optional peer, as Vite is: only an app that builds with the plugin installs it.
let loaded: Promise<typeof MagicString> | undefined;
function magicString(): Promise<typeof MagicString> {
  loaded ??= import('magic-string').then(
    (module) => module.default,
    (error: unknown) => {
      throw new Error(
        'toolgate: the Vite plugin of @toolgate/core/vite needs magic-string to edit the modules it compiles schemas in; install it beside vite (npm install --save-dev magic-string).',
        { cause: error },
      );
    },
  );
  return loaded;
}
const ATTACH = '__toolgate_attach';
// Ajv's generated code and its helpers are CommonJS: each helper file becomes an ES module of its
// own (shared by every schema that needs it), and each validator an expression in the app's module.
const CJS = '\0toolgate-cjs:';
const CJS_PUBLIC = 'virtual:toolgate-cjs:';
const REQUIRE = /\brequire\(\s*"([^"]+)"\s*\)|\brequire\(\s*'([^']+)'\s*\)/g;
const here = createRequire(import.meta.url);

interface ModuleValidators {
  /** The name of each schema's validator, by the schema's JSON text (one validator a schema). */
  readonly validators: Map<string, string>;
  /** The name each helper file is imported under, by its path. */
  readonly imports: Map<string, string>;
  source?: string;
}

function validatorOf(
  schema: JsonSchemaObject,
  options: JsonSchemaCompilerOptions,
  module: ModuleValidators,
): string {
  const text = JSON.stringify(schema);
  const known = module.validators.get(text);
  if (known !== undefined) return known;
  const source = generateValidator(schema, options);
  const table = requiresOf(source, here).map(([spec, file]) => {
    let local = module.imports.get(file);
    if (local === undefined) module.imports.set(file, (local = `__toolgate_r${module.imports.size}`));
    return `${JSON.stringify(spec)}: ${local}`;
  });
  const name = `__toolgate_v${module.validators.size}`;
  module.validators.set(text, name);
  // The schema's text goes with its check, for the gate to see that the schema is still that one.
  module.source = `${module.source ?? ''}const ${name} = { validate: /* @__PURE__ */ ${commonJsExpression(source, table)}, json: ${JSON.stringify(text)} };\n`;
  return name;
}

function preludeOf(module: ModuleValidators): string {
  const imports = [...module.imports].map(
    ([file, local]) => `import ${local} from ${JSON.stringify(CJS_PUBLIC + file)};\n`,
  );
  const attach = `const ${ATTACH} = (schema, built) => Object.defineProperty(schema, Symbol.for(${JSON.stringify(BUILD_TIME_VALIDATOR)}), { value: built, configurable: true });\n`;
  return imports.join('') + attach + (module.source ?? '');
}

/** A CommonJS source as an expression that runs it and gives its `module.exports`. */
function commonJsExpression(source: string, requires: string[]): string {
  return `(() => { const module = { exports: {} }; (function (module, exports, require) {\n${source}\n}).call(module.exports, module, module.exports, (id) => ({ ${requires.join(', ')} })[id]); return module.exports; })()`;
}

function requiresOf(source: string, requireFrom: NodeJS.Require): [string, string][] {
  const specs = new Set([...source.matchAll(REQUIRE)].map((match) => match[1] ?? match[2] ?? ''));
  return [...specs].map((spec) => [spec, requireFrom.resolve(spec)]);
}

function commonJsAsModule(file: string): string {
  const requires = requiresOf(readFileSync(file, 'utf8'), createRequire(file));
  const imports = requires.map(
    ([, path], index) => `import __toolgate_${index} from ${JSON.stringify(CJS_PUBLIC + path)};\n`,
  );
  const table = requires.map(([spec], index) => `${JSON.stringify(spec)}: __toolgate_${index}`);
  return `${imports.join('')}export default /* @__PURE__ */ ${commonJsExpression(readFileSync(file, 'utf8'), table)};\n`;
}
