import { escapePointer } from './schema.ts';
import { jsonSchemaAs2020 } from './dialect.ts';

/**
 * A JSON Schema made ready for OpenAI strict mode, or every reason it cannot be.
 *
 * @example
 * const result: OpenAIStrictSchema = { ok: false, problems: ['/properties/unit is optional: strict mode needs every property in "required"'] };
 */
export type OpenAIStrictSchema =
  | { readonly ok: true; readonly schema: Record<string, unknown> }
  | { readonly ok: false; readonly problems: readonly string[] };

/** Keywords strict mode rejects, from OpenAI's Structured Outputs "supported schemas" and its SDK's checks. */
const UNSUPPORTED = [
  'allOf',
  'not',
  'oneOf',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'patternProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  'minContains',
  'maxContains',
  'prefixItems',
  'uniqueItems',
  'additionalItems',
  'dependencies',
  'contentEncoding',
  'contentMediaType',
  '$anchor',
  '$dynamicRef',
  '$dynamicAnchor',
] as const;

/**
 * Makes a tool's JSON Schema fit OpenAI strict mode where that does not change which arguments the
 * tool accepts, and otherwise says why it cannot. The one change made is adding
 * `additionalProperties: false` to objects that do not say: the model then sends no extra keys,
 * which the tool's own schema accepts anyway. An optional property is reported, never turned into
 * a required nullable one, because the model would then send `null`, which the tool's schema refuses.
 *
 * @example
 * openaiStrictSchema({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
 * // { ok: true, schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false } }
 */
export function openaiStrictSchema(given: Record<string, unknown>): OpenAIStrictSchema {
  const problems: string[] = [];
  let schema: Record<string, unknown>;
  try {
    // Strict mode reads 2020-12: a draft-07 tuple or `definitions` is checked as what it means there.
    schema = jsonSchemaAs2020(given);
  } catch (error) {
    return { ok: false, problems: [`(root) ${(error as Error).message}`] };
  }
  if (schema['type'] !== 'object')
    problems.push(`(root) must be type "object" (got ${JSON.stringify(schema['type'] ?? null)})`);
  if ('anyOf' in schema) problems.push('(root) must not be anyOf');
  const strict = visit(schema, '', problems) as Record<string, unknown>;
  return problems.length === 0 ? { ok: true, schema: strict } : { ok: false, problems };
}

function visit(node: unknown, path: string, problems: string[]): unknown {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const schema = node as Record<string, unknown>;
  const at = path === '' ? '(root)' : path;
  const out: Record<string, unknown> = { ...schema };
  for (const keyword of UNSUPPORTED) {
    if (keyword in schema) problems.push(`${at} uses "${keyword}", which strict mode does not support`);
  }
  const types = Array.isArray(schema['type']) ? (schema['type'] as unknown[]) : [schema['type']];
  const isObject = types.includes('object') || 'properties' in schema;
  if (isObject) {
    const properties = schema['properties'];
    if (typeof properties !== 'object' || properties === null || Object.keys(properties).length === 0) {
      if (!('$ref' in schema))
        problems.push(
          `${at} is an object with no "properties"; strict mode cannot describe a free-form object`,
        );
    } else {
      const required = Array.isArray(schema['required']) ? (schema['required'] as unknown[]) : [];
      const copied: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(properties)) {
        const child = `${path}/properties/${escapePointer(key)}`;
        if (!required.includes(key)) {
          problems.push(
            `${child} is optional: strict mode needs every property in "required" (make it required with a "null" type, or export with strict: false)`,
          );
        }
        copied[key] = visit(value, child, problems);
      }
      out['properties'] = copied;
    }
    const additional = schema['additionalProperties'];
    if (additional === undefined) out['additionalProperties'] = false;
    else if (additional !== false)
      problems.push(`${at} allows additional properties; strict mode needs "additionalProperties": false`);
  }
  const items = schema['items'];
  if (Array.isArray(items))
    problems.push(`${at} uses tuple-form "items", which strict mode does not support`);
  else if (items !== undefined) out['items'] = visit(items, `${path}/items`, problems);
  if (Array.isArray(schema['anyOf'])) {
    out['anyOf'] = (schema['anyOf'] as unknown[]).map((branch, index) =>
      visit(branch, `${path}/anyOf/${index}`, problems),
    );
  }
  for (const defs of ['$defs', 'definitions'] as const) {
    const group = schema[defs];
    if (typeof group === 'object' && group !== null) {
      const copied: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(group))
        copied[key] = visit(value, `${path}/${defs}/${escapePointer(key)}`, problems);
      out[defs] = copied;
    }
  }
  return out;
}
