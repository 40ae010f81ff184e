import { Validator, type OutputUnit } from '@cfworker/json-schema';
import type { Issue } from './record.ts';
import { escapePointer, toIssue, valueAt, type JsonSchemaCompiler, type ValidationResult } from './schema.ts';

// Keywords that only say "something below me failed"; the failure below is reported on its own.
const WRAPPERS = new Set([
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'unevaluatedItems',
  'contains',
  'dependentSchemas',
  '$ref',
  '$recursiveRef',
  'allOf',
  'if',
  'then',
  'else',
]);

/**
 * Compiles JSON Schemas with @cfworker/json-schema: no `eval`, so it runs under a strict
 * Content-Security-Policy, and it is about a fifth of Ajv's size, but it validates several
 * times slower. `@toolgate/core/csp` makes it the default.
 *
 * @example
 * import { createToolGate, cfworkerJsonSchema } from '@toolgate/core/csp';
 * const gate = createToolGate({ tools, jsonSchema: cfworkerJsonSchema });
 */
export const cfworkerJsonSchema: JsonSchemaCompiler = (schema) => {
  const validator = new Validator(schema as ConstructorParameters<typeof Validator>[0], '2020-12', false);
  return (value): ValidationResult => {
    const result = validator.validate(value);
    return result.valid ? { ok: true, value } : { ok: false, issues: toIssues(result.errors, schema, value) };
  };
};

function toIssues(errors: readonly OutputUnit[], schema: object, value: unknown): Issue[] {
  const summarised = errors
    .filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
    .map((e) => e.keywordLocation + '/');
  const issues: Issue[] = [];
  for (const error of errors) {
    if (WRAPPERS.has(error.keyword)) continue;
    if (summarised.some((prefix) => error.keywordLocation.startsWith(prefix))) continue;
    let path = decodeURI(error.instanceLocation.replace(/^#/, ''));
    if (error.keyword === 'required') {
      const missing = /required property "(.*)"\.$/.exec(error.error)?.[1];
      if (missing !== undefined) path += '/' + escapePointer(missing);
    }
    issues.push(
      toIssue({
        keyword: error.keyword,
        path,
        expected: valueAt(schema, decodeURI(error.keywordLocation)),
        data: valueAt(value, path),
        fallback: error.error,
      }),
    );
  }
  return issues;
}
