import type { JsonSchemaObject } from './tool-schema.ts';

/**
 * The JSON Schema dialects toolgate reads: draft 2020-12, the default when a schema has no
 * `$schema` (as MCP specifies), and draft-07, which `zod-to-json-schema`, the MCP TypeScript SDK
 * and many MCP servers write.
 *
 * @example
 * const dialect: JsonSchemaDialect = jsonSchemaDialect({ $schema: 'http://json-schema.org/draft-07/schema#' }); // 'draft-07'
 */
export type JsonSchemaDialect = '2020-12' | 'draft-07';

/**
 * The URI of each dialect's meta-schema, as Ajv registers it.
 *
 * @example
 * META_SCHEMA['draft-07']; // 'http://json-schema.org/draft-07/schema'
 */
export const META_SCHEMA: Readonly<Record<JsonSchemaDialect, string>> = {
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
  'draft-07': 'http://json-schema.org/draft-07/schema',
};

// The same meta-schema is written with or without `https` and the empty fragment.
function dialectNamed(uri: string): JsonSchemaDialect | undefined {
  const bare = uri.replace(/^https?:\/\//, '').replace(/#$/, '');
  if (bare === 'json-schema.org/draft/2020-12/schema') return '2020-12';
  if (bare === 'json-schema.org/draft-07/schema') return 'draft-07';
  return undefined;
}

/**
 * The dialect a schema's `$schema` names; 2020-12 when it names none. A `$schema` that is one of
 * the `known` schemas (a custom meta-schema) has the dialect that meta-schema is written in.
 * Throws, saying what is read, for any other `$schema`: a schema read in the wrong dialect
 * accepts values its author meant to refuse.
 *
 * @example
 * jsonSchemaDialect({ type: 'object' }); // '2020-12'
 * jsonSchemaDialect({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }); // 'draft-07'
 */
export function jsonSchemaDialect(
  schema: unknown,
  known: Readonly<Record<string, unknown>> = {},
): JsonSchemaDialect {
  const seen = new Set<string>();
  let node = schema;
  for (;;) {
    const uri =
      typeof node === 'object' && node !== null ? (node as { $schema?: unknown }).$schema : undefined;
    if (uri === undefined) return '2020-12';
    if (typeof uri !== 'string') throw new Error(`$schema must be a string (got ${JSON.stringify(uri)}).`);
    const dialect = dialectNamed(uri);
    if (dialect !== undefined) return dialect;
    const meta = Object.hasOwn(known, uri)
      ? known[uri]
      : Object.hasOwn(known, uri.replace(/#$/, ''))
        ? known[uri.replace(/#$/, '')]
        : undefined;
    if (meta === undefined || seen.has(uri)) {
      throw new Error(
        `$schema "${uri}" is not a dialect toolgate reads; use JSON Schema draft 2020-12 (the default, without $schema) or draft-07 ("http://json-schema.org/draft-07/schema#").`,
      );
    }
    seen.add(uri);
    node = meta;
  }
}

// Where a draft-07 schema keeps subschemas: one, a list of them, or a map of them.
const ONE = new Set([
  'additionalItems',
  'items',
  'contains',
  'additionalProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
]);
const LIST = new Set(['items', 'allOf', 'anyOf', 'oneOf']);
const MAP = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependencies']);
// Keywords a $ref keeps beside it: they describe, or hold schemas that pointers may reach.
const BESIDE_REF = new Set([
  'title',
  'description',
  '$comment',
  'default',
  'examples',
  'readOnly',
  'writeOnly',
  'definitions',
  '$defs',
]);
// Keywords that mean something in 2020-12 but nothing in draft-07, which ignores them.
const LATER = new Set([
  'prefixItems',
  'minContains',
  'maxContains',
  'unevaluatedProperties',
  'unevaluatedItems',
  'dependentRequired',
  'dependentSchemas',
  '$anchor',
  '$dynamicRef',
  '$dynamicAnchor',
  '$recursiveRef',
  '$recursiveAnchor',
  '$vocabulary',
]);

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Copies a draft-07 schema, rewriting each schema object in it with `rewrite`, which is handed
 * the object, a function that copies one of its keyword values (descending into subschemas), and
 * the schema resource (the root, or the nearest subschema with an `$id`) its pointers start from.
 */
function copyDraft07(
  schema: unknown,
  rewrite: (node: Node, copy: (key: string, value: unknown) => unknown, resource: Node) => Node,
): unknown {
  const visit = (node: unknown, resource: Node): unknown => {
    if (!isNode(node)) return node;
    const id = node['$id'];
    const here =
      typeof id === 'string' && !id.startsWith('#') && typeof node['$ref'] !== 'string' ? node : resource;
    return rewrite(
      node,
      (key, value) => {
        if (Array.isArray(value))
          return LIST.has(key) ? value.map((item: unknown) => visit(item, here)) : (value as unknown[]);
        if (ONE.has(key)) return visit(value, here);
        if (MAP.has(key) && isNode(value)) {
          return Object.fromEntries(
            Object.entries(value).map(([name, child]) => [
              name,
              Array.isArray(child) ? child : visit(child, here),
            ]),
          );
        }
        return value;
      },
      here,
    );
  };
  return isNode(schema) ? visit(schema, schema) : schema;
}

/**
 * A copy of a draft-07 schema where each `$ref` stands alone, as draft-07 says ("all other
 * properties in a `$ref` object MUST be ignored"), for validators that would apply them (Ajv does).
 * Descriptions and `definitions` beside a `$ref` are kept: they do not validate.
 *
 * @example
 * draft07RefsAlone({ properties: { unit: { $ref: '#/definitions/unit', maxLength: 1 } } });
 * // { properties: { unit: { $ref: '#/definitions/unit' } } }
 */
export function draft07RefsAlone(schema: JsonSchemaObject): JsonSchemaObject {
  return copyDraft07(schema, (node, copy) => {
    const out: Node = {};
    const alone = typeof node['$ref'] === 'string';
    for (const [key, value] of Object.entries(node)) {
      if (!alone || key === '$ref' || key === '$schema' || BESIDE_REF.has(key)) out[key] = copy(key, value);
    }
    return out;
  }) as JsonSchemaObject;
}

/**
 * The schemas a tool schema may `$ref` by URI, as a validator reading `dialect` should hold them:
 * each one that is draft-07 (by its own `$schema`, or, naming none, because it is read as part of
 * a draft-07 schema) with every `$ref` standing alone, at any depth. A schema whose `$schema`
 * names neither dialect is left as it is.
 */
export function knownSchemasFor(
  known: Readonly<Record<string, unknown>>,
  dialect: JsonSchemaDialect,
): Record<string, unknown> {
  const held: Record<string, unknown> = {};
  for (const [uri, schema] of Object.entries(known)) {
    let own: JsonSchemaDialect | undefined = dialect;
    if (isNode(schema) && schema['$schema'] !== undefined) {
      try {
        own = jsonSchemaDialect(schema, known);
      } catch {
        own = undefined;
      }
    }
    held[uri] = own === 'draft-07' && isNode(schema) ? draft07RefsAlone(schema) : schema;
  }
  return held;
}

/**
 * The draft 2020-12 schema that accepts exactly what a draft-07 schema accepts, for providers that
 * read 2020-12: array-form `items` becomes `prefixItems` (and `additionalItems` becomes `items`),
 * `dependencies` becomes `dependentRequired`/`dependentSchemas`, `definitions` becomes `$defs`
 * (and the pointers into it follow), a `$ref` stands alone, a `$id` fragment becomes `$anchor`,
 * and keywords draft-07 ignores are dropped. A 2020-12 schema is returned as it is. `$schema` is
 * left out of the result, as providers want. `known` schemas are as for `jsonSchemaDialect`.
 *
 * @example
 * jsonSchemaAs2020({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'number' }], additionalItems: false });
 * // { type: 'array', prefixItems: [{ type: 'number' }], items: false }
 */
export function jsonSchemaAs2020(
  schema: JsonSchemaObject,
  known?: Readonly<Record<string, unknown>>,
): JsonSchemaObject;
export function jsonSchemaAs2020(
  schema: JsonSchemaObject | boolean,
  known?: Readonly<Record<string, unknown>>,
): JsonSchemaObject | boolean;
export function jsonSchemaAs2020(
  schema: JsonSchemaObject | boolean,
  known: Readonly<Record<string, unknown>> = {},
): JsonSchemaObject | boolean {
  if (typeof schema === 'boolean') return schema;
  const { $schema: _dialect, ...rest } = schema;
  if (jsonSchemaDialect(schema, known) === '2020-12') return rest;
  return copyDraft07(rest, (node, copy, resource) => {
    const out: Node = {};
    const alone = typeof node['$ref'] === 'string';
    const tuple = Array.isArray(node['items']);
    for (const [key, value] of Object.entries(node)) {
      if (key === '$schema' || LATER.has(key) || (alone && key !== '$ref' && !BESIDE_REF.has(key))) continue;
      const copied = copy(key, value);
      if (key === '$ref' && typeof value === 'string') out['$ref'] = movedRef(value, resource);
      else if (key === 'items' && tuple) out['prefixItems'] = copied;
      else if (key === 'additionalItems') {
        if (tuple) out['items'] = copied;
      } else if (key === 'definitions' && !('$defs' in node)) out['$defs'] = copied;
      else if (key === 'dependencies' && isNode(copied)) {
        for (const [name, dependency] of Object.entries(copied)) {
          const group = Array.isArray(dependency) ? 'dependentRequired' : 'dependentSchemas';
          out[group] = { ...(out[group] as Node | undefined), [name]: dependency };
        }
      } else if (key === '$id' && typeof value === 'string' && value.includes('#')) {
        const [base = '', anchor = ''] = value.split('#');
        if (base !== '') out['$id'] = base;
        if (anchor !== '') out['$anchor'] = anchor;
      } else out[key] = copied;
    }
    return out;
  }) as JsonSchemaObject;
}

// A `$ref` by JSON pointer into the schema being rewritten (`#/definitions/a`, or the resource's own
// `$id` and a pointer) follows its target; any other reference is left as it is.
function movedRef(ref: string, resource: Node): string {
  const hash = ref.indexOf('#');
  const base = ref.slice(0, hash);
  const pointer = ref.slice(hash + 1);
  const id = typeof resource['$id'] === 'string' ? resource['$id'].replace(/#.*$/, '') : undefined;
  if (hash < 0 || !pointer.startsWith('/') || (base !== '' && base !== id)) return ref;
  return `${base}#${movedPointer(resource, pointer)}`;
}

// Where a JSON pointer into a draft-07 schema points once the schema is written as 2020-12.
function movedPointer(root: Node, pointer: string): string {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const moved: string[] = [];
  let node: unknown = root;
  // A schema object, a container of schemas (`properties`, `allOf`), or any other value.
  let kind: 'schema' | 'container' | 'value' = 'schema';
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index] as string;
    const next = isNode(node) || Array.isArray(node) ? (node as Node)[segment] : undefined;
    if (kind === 'schema' && isNode(node)) {
      const tuple = Array.isArray(node['items']);
      if (segment === 'dependencies' && index + 1 < segments.length) {
        const name = segments[++index] as string;
        const dependency = isNode(next) ? next[name] : undefined;
        moved.push(Array.isArray(dependency) ? 'dependentRequired' : 'dependentSchemas', name);
        node = dependency;
        kind = Array.isArray(dependency) ? 'value' : 'schema';
        continue;
      }
      if (segment === 'items' && tuple) moved.push('prefixItems');
      else if (segment === 'additionalItems' && tuple) moved.push('items');
      else if (segment === 'definitions' && !('$defs' in node)) moved.push('$defs');
      else moved.push(segment);
      kind =
        ONE.has(segment) && !Array.isArray(next)
          ? 'schema'
          : MAP.has(segment) || LIST.has(segment)
            ? 'container'
            : 'value';
    } else {
      moved.push(segment);
      kind = kind === 'container' ? 'schema' : 'value';
    }
    node = next;
  }
  return moved.map((segment) => '/' + segment.replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}
