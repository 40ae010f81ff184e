import type { Issue } from '../record/record.ts';
import { escapePointer, toIssue } from './schema.ts';

/**
 * The Ajv options toolgate compiles with. Use the same ones when you generate standalone
 * validators at build time, so that they report issues the way the gate words them.
 *
 * @example
 * const ajv = new Ajv2020({ ...AJV_OPTIONS, code: { source: true, esm: true } });
 */
export const AJV_OPTIONS = /* @__PURE__ */ Object.freeze({
  allErrors: true, // the model should hear about every wrong value at once, not one per round trip
  verbose: true, // errors carry the offending value and the keyword's schema value, for wording
  ownProperties: true, // `required: ['toString']` must not be met by Object.prototype
  strict: false, // tool schemas carry descriptions, examples and vendor keywords
});

/**
 * The fields of an Ajv error that toolgate reads (Ajv's own `ErrorObject` has them all).
 *
 * @example
 * const errors: readonly AjvError[] = validate.errors ?? [];
 */
export interface AjvError {
  readonly keyword: string;
  readonly instancePath: string;
  readonly schemaPath: string;
  readonly params: object;
  readonly message?: string;
  readonly schema?: unknown;
  readonly data?: unknown;
}

/**
 * Turns Ajv's errors into toolgate issues: one per offending value, a failed `anyOf`/`oneOf`/`contains`
 * summarised once rather than branch by branch.
 *
 * @example
 * if (!validate(value)) return { ok: false, issues: ajvIssues(validate.errors ?? []) };
 */
export function ajvIssues(errors: readonly AjvError[]): Issue[] {
  // No single item had to match `contains`: what each item failed is not the issue.
  const summarised = errors
    .filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'contains')
    .map((e) => e.schemaPath + '/');
  const issues: Issue[] = [];
  for (const error of errors) {
    if (error.keyword === 'if') continue;
    if (summarised.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    const params = error.params as Record<string, unknown>;
    const child = params['missingProperty'] ?? params['additionalProperty'] ?? params['unevaluatedProperty'];
    const dependency = error.keyword === 'dependencies' || error.keyword === 'dependentRequired';
    issues.push(
      toIssue({
        keyword: error.keyword,
        path:
          typeof child === 'string' ? `${error.instancePath}/${escapePointer(child)}` : error.instancePath,
        expected: dependency ? params['property'] : error.schema,
        data: error.data,
        fallback: error.message ?? error.keyword,
      }),
    );
  }
  return issues;
}
