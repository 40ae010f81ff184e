import { Ajv2020, type ErrorObject, type SchemaObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { escapePointer, toIssue, type JsonSchemaCompiler, type ValidationResult } from './schema.ts';
import type { Issue } from './record.ts';

let shared: Ajv2020 | undefined;

function ajv(): Ajv2020 {
  if (shared) return shared;
  shared = new Ajv2020({
    allErrors: true, // the model should hear about every wrong value at once, not one per round trip
    verbose: true, // errors carry the offending value and the keyword's schema value, for wording
    ownProperties: true, // `required: ['toString']` must not be met by Object.prototype
    strict: false, // tool schemas carry descriptions, examples and vendor keywords
    addUsedSchema: false, // two tools may reuse one `$id` without clashing
  });
  addFormats(shared);
  return shared;
}

/**
 * Compiles JSON Schemas with Ajv (draft 2020-12, with formats). The fastest correct path, and the
 * default of `@toolgate/core`; it generates code with `new Function`, which a Content-Security-Policy
 * without `'unsafe-eval'` forbids. Use `cfworkerJsonSchema` from `@toolgate/core/csp` there.
 *
 * @example
 * const gate = createToolGate({ tools, jsonSchema: ajvJsonSchema });
 */
export const ajvJsonSchema: JsonSchemaCompiler = (schema) => {
  const validate = ajv().compile(schema as SchemaObject);
  return (value): ValidationResult =>
    validate(value) ? { ok: true, value } : { ok: false, issues: toIssues(validate.errors ?? []) };
};

function toIssues(errors: readonly ErrorObject[]): Issue[] {
  // A failed anyOf/oneOf also reports each branch's failure; the model needs the one summary.
  const summarised = errors
    .filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
    .map((e) => e.schemaPath + '/');
  const issues: Issue[] = [];
  for (const error of errors) {
    if (error.keyword === 'if') continue;
    if (summarised.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    const params = error.params as Record<string, unknown>;
    const child = params['missingProperty'] ?? params['additionalProperty'] ?? params['unevaluatedProperty'];
    issues.push(
      toIssue({
        keyword: error.keyword,
        path: typeof child === 'string' ? `${error.instancePath}/${escapePointer(child)}` : error.instancePath,
        expected: error.schema,
        data: error.data,
        fallback: error.message ?? error.keyword,
      }),
    );
  }
  return issues;
}
