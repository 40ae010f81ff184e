import { booleanSchemaCheck, precompiledCheck, type PrecompiledValidator } from './precompiled.ts';
import type { JsonSchemaCompiler } from './schema.ts';
import type { JsonSchemaObject } from './tool-schema.ts';

/**
 * The registered symbol under which the Vite plugin of `@toolgate/core/vite` gives a schema its
 * generated validator and the JSON text it was generated from (a non-enumerable property, so the
 * schema a provider is sent is unchanged). Registered rather than a module's own: the plugin writes
 * it into the app's module, which may meet a gate from another copy of this package (a dev
 * server's pre-bundled dependency).
 *
 * @example
 * Object.defineProperty(schema, Symbol.for(BUILD_TIME_VALIDATOR), { value: { validate, json: JSON.stringify(schema) } });
 */
export const BUILD_TIME_VALIDATOR = 'toolgate.validator';
const VALIDATOR = Symbol.for(BUILD_TIME_VALIDATOR);

/**
 * A compiler that checks a schema with the validator generated for it at build time, when it has
 * one and the schema is still the one it was generated from, and otherwise with `runtime`.
 *
 * @example
 * const compile = preferBuildTime(cfworkerJsonSchema);
 */
export function preferBuildTime(runtime: JsonSchemaCompiler): JsonSchemaCompiler {
  return (schema) => {
    const built: unknown =
      typeof schema === 'object' ? (schema as Record<symbol, unknown>)[VALIDATOR] : undefined;
    if (typeof built !== 'object' || built === null) return runtime(schema);
    const { validate, json } = built as { validate?: unknown; json?: unknown };
    // The plugin read the schema as its source writes it; code that ran since may have changed it
    // (`schema.required.push(...)`), and the generated check would then let through what the
    // schema the model is sent forbids.
    return typeof validate === 'function' && json === JSON.stringify(schema)
      ? precompiledCheck(validate as PrecompiledValidator)
      : runtime(schema);
  };
}

/**
 * What `@toolgate/core/compiled` falls back to: no validator at all, so that an app whose every
 * schema was compiled at build time ships none. A schema left uncompiled makes its tool
 * unavailable, with a message that says how to fix it.
 *
 * @example
 * const gate = createToolGate({ tools, jsonSchema: preferBuildTime(buildTimeOnlyJsonSchema) });
 */
export const buildTimeOnlyJsonSchema: JsonSchemaCompiler = (schema: JsonSchemaObject) => {
  if (typeof schema === 'boolean') return booleanSchemaCheck(schema);
  throw new Error(
    'it was not compiled at build time, or was changed after it was read there. The Vite plugin of @toolgate/core/vite compiles a JSON Schema written as a literal in defineTool, or a `const` of the same module holding one; write it so, or pass `toolgate({ runtimeSchemas: true })` to ship a validator for schemas made at runtime.',
  );
};
