import { toIssue, type JsonSchemaCompiler, type ValidationResult } from './schema.ts';
import { ajvIssues, type AjvError } from './ajv-issues.ts';

/**
 * A validate function as Ajv's standalone code exports it.
 *
 * @example
 * import { charge } from './validators.generated.js';
 * const validate: PrecompiledValidator = charge;
 */
export interface PrecompiledValidator {
  (value: unknown): boolean;
  errors?: readonly AjvError[] | null;
}

/**
 * Uses Ajv validators generated at build time (`ajv/dist/standalone`), matched to each tool's
 * schema by its `$id`. As fast as Ajv, without `eval` at runtime (so it passes a strict
 * Content-Security-Policy), and without Ajv in the bundle: only the generated code ships. Generate
 * them with `AJV_OPTIONS` so that issues read the same as with the default validator.
 *
 * @example
 * // build step: standaloneCode(new Ajv2020({ ...AJV_OPTIONS, schemas: [chargeSchema], code: { source: true, esm: true } }), { charge: 'charge' })
 * import * as validators from './validators.generated.js';
 * const gate = createToolGate({ tools, jsonSchema: precompiledJsonSchema(validators) });
 */
export function precompiledJsonSchema(
  validators: Readonly<Record<string, PrecompiledValidator>>,
): JsonSchemaCompiler {
  return (schema) => {
    if (typeof schema === 'boolean') return booleanSchemaCheck(schema);
    const id = typeof schema.$id === 'string' ? schema.$id : undefined;
    const validate =
      id === undefined ? undefined : Object.hasOwn(validators, id) ? validators[id] : undefined;
    if (validate === undefined) {
      const known = Object.keys(validators).join(', ') || 'none';
      throw new Error(
        id === undefined
          ? 'precompiledJsonSchema: give each JSON Schema an `$id` so that its generated validator can be found.'
          : `precompiledJsonSchema: no generated validator for schema "${id}" (have: ${known}); regenerate the validators.`,
      );
    }
    return precompiledCheck(validate);
  };
}

/**
 * The gate's check around one generated validator: its errors worded as the runtime Ajv's are.
 *
 * @example
 * const check = precompiledCheck(validators.charge);
 * check({ amount_cents: '12.50' }); // { ok: false, issues: [...] }
 */
export function precompiledCheck(validate: PrecompiledValidator): (value: unknown) => ValidationResult {
  return (value) =>
    validate(value) ? { ok: true, value } : { ok: false, issues: ajvIssues(validate.errors ?? []) };
}

/**
 * The check of a boolean schema, `true` or `false`, which needs no generated code (only untyped
 * callers pass one).
 *
 * @example
 * booleanSchemaCheck(false)({}); // { ok: false, issues: [{ path: '', keyword: 'false', … }] }
 */
export function booleanSchemaCheck(schema: boolean): (value: unknown) => ValidationResult {
  return (value) =>
    schema
      ? { ok: true, value }
      : {
          ok: false,
          issues: [
            toIssue({
              keyword: 'false',
              path: '',
              expected: false,
              data: value,
              fallback: 'boolean schema is false',
            }),
          ],
        };
}
