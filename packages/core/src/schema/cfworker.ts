import { dereference, validate, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema';
import type { Issue } from '../record/record.ts';
import {
  escapePointer,
  toIssue,
  valueAt,
  type JsonSchemaCompiler,
  type JsonSchemaCompilerOptions,
  type ValidationResult,
} from './schema.ts';
import { draft07RefsAlone, jsonSchemaDialect, knownSchemasFor } from './dialect.ts';
import { checkSchemaShape } from './schema-shape.ts';

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
  'dependentSchemas',
  '$ref',
  '$recursiveRef',
  'allOf',
  'if',
  'then',
  'else',
]);

// Keywords whose value maps names to schemas.
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependentSchemas',
  'dependencies',
]);

type Lookup = Record<string, Schema | boolean>;

/**
 * Creates a @cfworker/json-schema compiler that also knows the given `schemas`, so that tool
 * schemas can `$ref` them by URI. `cfworkerJsonSchema` is this with no extra schemas.
 *
 * @example
 * import { createCfworkerJsonSchema, createToolGate } from '@toolgate/core/csp';
 * const gate = createToolGate({ tools, jsonSchema: createCfworkerJsonSchema({ schemas: { 'https://example.com/address.json': addressSchema } }) });
 */
export function createCfworkerJsonSchema(options: JsonSchemaCompilerOptions = {}): JsonSchemaCompiler {
  const known = options.schemas ?? {};
  return (schema) => {
    const draft: SchemaDraft = jsonSchemaDialect(schema, known) === 'draft-07' ? '7' : '2020-12';
    // The library checks no schema against its meta-schema; a mistyped keyword is refused here,
    // when the gate compiles the tool, instead of refusing (or allowing) every value later.
    checkSchemaShape(schema, draft);
    // The library ignores a draft-07 `$ref`'s sibling keywords when it validates, but still lets a
    // sibling `$id` change the base URI the `$ref` resolves against; draft-07 ignores them all.
    const root = (draft === '7' && typeof schema === 'object' ? draft07RefsAlone(schema) : schema) as Schema;
    const lookup = dereference(root) as Lookup;
    const own = Object.values(lookup);
    // As the library's own `Validator.addSchema` registers a schema under a URI; a draft-07 one
    // with its `$ref`s alone, since the library applies their siblings when it reads 2020-12.
    for (const [uri, extra] of Object.entries(knownSchemasFor(known, draft === '7' ? 'draft-07' : '2020-12')))
      dereference(typeof extra === 'boolean' ? extra : { ...(extra as Schema), $id: uri }, lookup);
    // The library resolves a `$ref` only when a value reaches it; one that can never resolve is a
    // schema that does not compile, and says so when the gate is created.
    for (const node of own) {
      const ref = typeof node === 'object' ? node.__absolute_ref__ : undefined;
      if (ref !== undefined && lookup[ref] === undefined)
        throw new Error(`can't resolve reference ${String((node as Schema).$ref)} (${ref})`);
    }
    return (value): ValidationResult => {
      const result = validate(value, root, draft, lookup, false);
      return result.valid
        ? { ok: true, value }
        : { ok: false, issues: toIssues(result.errors, root, lookup, value) };
    };
  };
}

/**
 * Compiles JSON Schemas with @cfworker/json-schema: no `eval`, so it runs under a strict
 * Content-Security-Policy, and it is about a sixth of Ajv's size, but it validates several
 * times slower. The default of `@toolgate/core` (and of `@toolgate/core/csp`). Reads draft
 * 2020-12, or draft-07 when `$schema` says so; a schema whose keywords hold values of the wrong
 * kind does not compile.
 *
 * @example
 * import { createToolGate, cfworkerJsonSchema } from '@toolgate/core';
 * const gate = createToolGate({ tools, jsonSchema: cfworkerJsonSchema });
 */
export const cfworkerJsonSchema: JsonSchemaCompiler = /* @__PURE__ */ createCfworkerJsonSchema();

function toIssues(errors: readonly OutputUnit[], root: Schema, lookup: Lookup, value: unknown): Issue[] {
  // A failed `anyOf`, `oneOf` or `contains` is one issue: what each branch or item failed says
  // nothing a person can act on (no single item had to match `contains`).
  const summarised = errors
    .filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'contains')
    .map((e) => e.keywordLocation + '/');
  const issues: Issue[] = [];
  for (const error of errors) {
    if (WRAPPERS.has(error.keyword)) continue;
    if (summarised.some((prefix) => error.keywordLocation.startsWith(prefix))) continue;
    // The library writes locations as URI fragments: each key is pointer-escaped, then URI-encoded.
    let path = decodeURIComponent(error.instanceLocation.replace(/^#/, ''));
    const keyword = error.keyword;
    const at = schemaAt(root, lookup, error.keywordLocation);
    const data = valueAt(value, path);
    let expected = at.keyword === keyword && at.parent !== undefined ? at.parent[keyword] : undefined;
    if (keyword === 'required' || keyword === 'dependentRequired' || keyword === 'dependencies') {
      const missing = missingKey(
        error.error,
        keyword === 'required'
          ? { '': expected }
          : at.parent?.[keyword === 'dependencies' ? 'dependencies' : 'dependentRequired'],
      );
      // A schema-valued dependency failed: its own failures are reported below it.
      if (missing === undefined && keyword === 'dependencies') continue;
      if (missing !== undefined) path += '/' + escapePointer(missing.name);
      expected = missing?.when;
    }
    issues.push(toIssue({ keyword, path, expected, data, fallback: error.error }));
  }
  return issues;
}

/**
 * The key whose absence an error reports (and, for a dependency, the key that requires it), found by writing each candidate the way the library
 * words it (`Instance does not have required property "k".`, `Instance has "a" but does not have
 * "b".`) rather than by parsing the message, which a key with quotes in it would fool.
 */
function missingKey(message: string, groups: unknown): { name: string; when: string } | undefined {
  if (typeof groups !== 'object' || groups === null) return undefined;
  for (const [key, names] of Object.entries(groups)) {
    if (!Array.isArray(names)) continue;
    for (const name of names as unknown[]) {
      if (typeof name !== 'string') continue;
      if (
        message === `Instance does not have required property "${name}".` ||
        message === `Instance has "${key}" but does not have "${name}".`
      )
        return { name, when: key };
    }
  }
  return undefined;
}

/**
 * The schema object a keyword location ends in, following `$ref`s as the validator did, so that a
 * check reached through `$ref` is worded with what that check expects.
 */
function schemaAt(
  root: Schema,
  lookup: Lookup,
  location: string,
): { parent?: Record<string, unknown>; keyword?: string } {
  const segments = location
    .replace(/^#/, '')
    .split('/')
    .slice(1)
    .map((segment) => decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~'));
  const keyword = segments.pop();
  let node: unknown = root;
  let named = false;
  for (const segment of segments) {
    if (typeof node !== 'object' || node === null) return {};
    const schema = node as Schema;
    // Below `properties` (and the other maps of names) a segment is a name: a property named
    // `$ref` is not a reference.
    const isName: boolean = named;
    named = !isName && NAME_MAPS.has(segment);
    if (!isName && segment === '$ref' && !Array.isArray(node))
      node = lookup[schema.__absolute_ref__ ?? String(schema.$ref)];
    else if (segment === '$recursiveRef') return {};
    else node = Object.hasOwn(node, segment) ? (node as Record<string, unknown>)[segment] : undefined;
  }
  return typeof node === 'object' && node !== null && keyword !== undefined
    ? { parent: node as Record<string, unknown>, keyword }
    : {};
}
