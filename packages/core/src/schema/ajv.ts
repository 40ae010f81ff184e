import { Ajv as AjvDraft07, type AnySchema, type Options, type SchemaObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JsonSchemaCompiler, JsonSchemaCompilerOptions, ValidationResult } from './schema.ts';
import { AJV_OPTIONS, ajvIssues } from './ajv-issues.ts';
import {
  draft07RefsAlone,
  jsonSchemaDialect,
  knownSchemasFor,
  META_SCHEMA,
  type JsonSchemaDialect,
} from './dialect.ts';

type AnyAjv = AjvDraft07 | Ajv2020;
type Check = (value: unknown) => ValidationResult;

/**
 * Creates an Ajv compiler (draft 2020-12 and draft-07, each as its `$schema` says, with formats)
 * that also knows the given `schemas`, so that tool schemas can `$ref` them by URI.
 * `ajvJsonSchema` is this with no extra schemas.
 *
 * @example
 * const jsonSchema = createAjvJsonSchema({ schemas: { 'https://example.com/address.json': addressSchema } });
 * const gate = createToolGate({ tools, jsonSchema });
 */
export function createAjvJsonSchema(options: JsonSchemaCompilerOptions = {}): JsonSchemaCompiler {
  const known = options.schemas ?? {};
  // Ajv applies a `$ref`'s siblings in every schema it holds; draft-07 ignores them.
  const held = new Map<JsonSchemaDialect, Record<string, unknown>>();
  const make = (dialect: JsonSchemaDialect, ajvOptions: Options): AnyAjv => {
    const ajv = dialect === 'draft-07' ? new AjvDraft07(ajvOptions) : new Ajv2020(ajvOptions);
    addFormats(ajv);
    let schemas = held.get(dialect);
    if (schemas === undefined) held.set(dialect, (schemas = knownSchemasFor(known, dialect)));
    for (const [uri, schema] of Object.entries(schemas))
      ajv.addSchema(schema as AnySchema, uri, undefined, false);
    return ajv;
  };
  // One Ajv per dialect checks schemas against their meta-schema (compiling that once); each tool
  // schema is then compiled in an Ajv of its own, so that it can refer to itself (`$ref: '#'`, its
  // own `$id`) while two tools that use one `$id` never meet.
  const checkers = new Map<JsonSchemaDialect, AnyAjv>();
  // Compiling takes a millisecond or so; an app that makes a gate per conversation reuses its tools' schemas.
  const compiled = new WeakMap<object, Check>();
  return (schema) => {
    let check = compiled.get(schema);
    if (check !== undefined) return check;
    const dialect = jsonSchemaDialect(schema, known);
    let checker = checkers.get(dialect);
    if (checker === undefined) checkers.set(dialect, (checker = make(dialect, { ...AJV_OPTIONS })));
    const meta =
      typeof schema.$schema === 'string' && Object.hasOwn(known, schema.$schema)
        ? schema.$schema
        : META_SCHEMA[dialect];
    if (!checker.validate(meta, schema))
      throw new Error(`schema is invalid: ${checker.errorsText(checker.errors)}`);
    const ajv = make(dialect, { ...AJV_OPTIONS, validateSchema: false });
    const validate = ajv.compile(
      (dialect === 'draft-07' ? draft07RefsAlone(schema) : schema) as SchemaObject,
    );
    check = (value) =>
      validate(value) ? { ok: true, value } : { ok: false, issues: ajvIssues(validate.errors ?? []) };
    // A boolean schema (`true`) from untyped code cannot be a WeakMap key; it compiles in no time.
    if (typeof schema === 'object') compiled.set(schema, check);
    return check;
  };
}

/**
 * Compiles JSON Schemas with Ajv (draft 2020-12, or draft-07 when `$schema` says so, with
 * formats). The fastest correct path, and the default of `@toolgate/core`; it generates code with
 * `new Function`, which a Content-Security-Policy without `'unsafe-eval'` forbids. There, use
 * `cfworkerJsonSchema` or `precompiledJsonSchema` from `@toolgate/core/csp`.
 *
 * @example
 * const gate = createToolGate({ tools, jsonSchema: ajvJsonSchema });
 */
// Pure: an app that never uses the Ajv path leaves Ajv out of its bundle.
export const ajvJsonSchema: JsonSchemaCompiler = /* @__PURE__ */ createAjvJsonSchema();
