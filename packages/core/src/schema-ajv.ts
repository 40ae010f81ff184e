import { Ajv2020, type SchemaObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JsonSchemaCompiler, ValidationResult } from './schema.ts';
import { AJV_OPTIONS, ajvIssues } from './schema-ajv-issues.ts';

let shared: Ajv2020 | undefined;

function ajv(): Ajv2020 {
  if (shared) return shared;
  shared = new Ajv2020({ ...AJV_OPTIONS });
  addFormats(shared);
  return shared;
}

/**
 * Compiles JSON Schemas with Ajv (draft 2020-12, with formats). The fastest correct path, and the
 * default of `@toolgate/core`; it generates code with `new Function`, which a Content-Security-Policy
 * without `'unsafe-eval'` forbids. There, use `cfworkerJsonSchema` or `precompiledJsonSchema`
 * from `@toolgate/core/csp`.
 *
 * @example
 * const gate = createToolGate({ tools, jsonSchema: ajvJsonSchema });
 */
export const ajvJsonSchema: JsonSchemaCompiler = (schema) => {
  let check = compiled.get(schema);
  if (check === undefined) {
    const validate = ajv().compile(schema as SchemaObject);
    check = (value): ValidationResult => (validate(value) ? { ok: true, value } : { ok: false, issues: ajvIssues(validate.errors ?? []) });
    compiled.set(schema, check);
  }
  return check;
};

// Compiling takes milliseconds; an app that makes a gate per conversation reuses its tools' schemas.
const compiled = new WeakMap<object, (value: unknown) => ValidationResult>();
