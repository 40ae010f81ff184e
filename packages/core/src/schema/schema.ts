import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { Issue } from '../record/record.ts';
import { textOf } from '../record/text.ts';
import type { JsonSchemaObject, ToolSchema } from './tool-schema.ts';

/**
 * The outcome of checking one value: the (possibly transformed) value, or every issue found.
 *
 * @example
 * const result: ValidationResult = { ok: false, issues: [{ path: '/q', message: 'is required', keyword: 'required' }] };
 */
export type ValidationResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly issues: readonly Issue[] };

/**
 * A compiled check for one schema. Standard Schemas may answer asynchronously.
 *
 * @example
 * const check: Validate = (value) => (typeof value === 'object' ? { ok: true, value } : { ok: false, issues: [] });
 */
export type Validate = (value: unknown) => ValidationResult | Promise<ValidationResult>;

/**
 * Turns a plain JSON Schema into a synchronous check. The gate compiles every tool's schema once,
 * when the gate is created. toolgate ships two: Ajv (the default, fastest, needs `'unsafe-eval'`
 * under a Content-Security-Policy) and @cfworker/json-schema (from `@toolgate/core/csp`). Both
 * read a schema in the dialect its `$schema` names (draft 2020-12 when it names none, or draft-07).
 *
 * @example
 * const gate = createToolGate({ tools, jsonSchema: cfworkerJsonSchema });
 */
export type JsonSchemaCompiler = (schema: JsonSchemaObject) => (value: unknown) => ValidationResult;

/**
 * What a JSON Schema compiler is made with: `schemas` that tool schemas refer to by URI
 * (`$ref: 'https://example.com/address.json'`), keyed by that URI, since toolgate fetches nothing.
 * A `$schema` that names one of them is read as a custom meta-schema, in the dialect it is written in.
 *
 * @example
 * const options: JsonSchemaCompilerOptions = { schemas: { 'https://example.com/address.json': addressSchema } };
 */
export interface JsonSchemaCompilerOptions {
  readonly schemas?: Readonly<Record<string, JsonSchemaObject | boolean>>;
}

/**
 * Whether a schema is a Standard Schema (Zod 4, Valibot, ArkType) rather than a JSON Schema.
 *
 * @example
 * isStandardSchema(z.string()); // true
 * isStandardSchema({ type: 'string' }); // false
 */
export function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  return typeof schema === 'object' && schema !== null && '~standard' in schema;
}

/**
 * Compiles a tool's schema into one check, whichever kind it is. A Standard Schema's answer counts
 * as a success only when it is one by the spec (no `issues`, and a `value`); a thenable of any
 * realm is awaited. Throws when the schema cannot be used (a JSON Schema that does not compile, a
 * Standard Schema without a `validate` function).
 *
 * @example
 * const check = compileSchema(z.object({ q: z.string() }), ajvJsonSchema);
 */
export function compileSchema(schema: ToolSchema, compileJson: JsonSchemaCompiler): Validate {
  return isStandardSchema(schema) ? standardValidate(schema) : compileJson(schema);
}

/**
 * The validate function of a Standard Schema (Zod, Valibot, ArkType), answering as every validator
 * here does.
 *
 * @example
 * const read = await standardValidate(z.object({ q: z.string() }))({ q: 'x' }); // { ok: true, value: { q: 'x' } }
 */
export function standardValidate(schema: StandardSchemaV1): Validate {
  const standard: unknown = schema['~standard'];
  const validate: unknown =
    typeof standard === 'object' && standard !== null
      ? (standard as { validate?: unknown }).validate
      : undefined;
  if (typeof validate !== 'function')
    throw new TypeError('its `~standard` property has no `validate` function');
  return (value) => {
    const result: unknown = validate.call(standard, value);
    // A Promise made in another realm (an iframe, a vm context) is not `instanceof Promise` here.
    return isThenable(result) ? Promise.resolve(result).then(fromStandard) : fromStandard(result);
  };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function fromStandard(result: unknown): ValidationResult {
  if (typeof result !== 'object' || result === null) return refused('the validator answered no result');
  const { issues } = result as { issues?: unknown };
  if (issues === undefined) {
    if (!('value' in result)) return refused('the validator answered neither a value nor issues');
    return { ok: true, value: result.value };
  }
  if (!Array.isArray(issues)) return refused('the validator answered issues that are not a list');
  if (issues.length === 0) return refused('the validator refused the value without saying why');
  return {
    ok: false,
    issues: issues.map((issue: unknown) => {
      const { path, message } = (typeof issue === 'object' && issue !== null ? issue : {}) as {
        path?: unknown;
        message?: unknown;
      };
      return { path: pathOf(path), message: typeof message === 'string' ? message : textOf(message) };
    }),
  };
}

function pathOf(path: unknown): string {
  try {
    return Array.isArray(path) ? pointerOf(path as PathSegment[]) : '';
  } catch {
    return ''; // a path of segments that cannot be read still leaves the message to tell
  }
}

function refused(message: string): ValidationResult {
  return { ok: false, issues: [{ path: '', message }] };
}

type PathSegment = PropertyKey | StandardSchemaV1.PathSegment;

/**
 * A JSON pointer (RFC 6901) for a list of keys.
 *
 * @example
 * pointerOf(['items', 0, 'sku']); // '/items/0/sku'
 */
export function pointerOf(path: readonly PathSegment[]): string {
  let pointer = '';
  for (const segment of path) {
    const key = typeof segment === 'object' ? segment.key : segment;
    pointer += '/' + escapePointer(String(key));
  }
  return pointer;
}

/**
 * Escapes one key for a JSON pointer.
 *
 * @example
 * escapePointer('a/b~c'); // 'a~1b~0c'
 */
export function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The value a JSON pointer points at, or `undefined` when nothing is there.
 *
 * @example
 * valueAt({ items: [{ sku: 'A' }] }, '/items/0/sku'); // 'A'
 */
export function valueAt(root: unknown, pointer: string): unknown {
  if (pointer === '' || pointer === '#') return root;
  const keys = pointer.replace(/^#/, '').split('/').slice(1);
  let node = root;
  for (const raw of keys) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * A short, model-readable description of a value, e.g. `string "12.50"` or `number 12.5`.
 *
 * @example
 * describeValue('12.50'); // 'string "12.50"'
 */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `array of ${value.length}`;
  switch (typeof value) {
    case 'string':
      return `string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
    case 'number':
      return Number.isInteger(value) ? `integer ${value}` : `number ${value}`;
    case 'boolean':
      return `boolean ${value}`;
    case 'object':
      return 'object';
    default:
      return typeof value;
  }
}

/**
 * One violation as a JSON Schema validator reports it, before it is worded for the model.
 *
 * @example
 * const violation: SchemaViolation = { keyword: 'minimum', path: '/qty', expected: 1, data: 0, fallback: 'must be >= 1' };
 */
export interface SchemaViolation {
  readonly keyword: string;
  /** JSON pointer to the offending value. */
  readonly path: string;
  /** The keyword's value in the schema (`0` for `minimum: 0`), when known. */
  readonly expected: unknown;
  readonly data: unknown;
  /** The validator's own wording, used when toolgate has none better. */
  readonly fallback: string;
}

const NO_GOT = new Set([
  'required',
  'dependentRequired',
  'dependencies',
  'additionalProperties',
  'unevaluatedProperties',
  'false',
]);

/**
 * Words a JSON Schema violation the same way whichever validator found it, saying what was
 * expected and what was received so that a model can correct its next call.
 *
 * @example
 * toIssue({ keyword: 'type', path: '/amount_cents', expected: 'integer', data: '12.50', fallback: '' });
 * // { path: '/amount_cents', keyword: 'type', message: 'must be integer (got string "12.50")' }
 */
export function toIssue(violation: SchemaViolation): Issue {
  const { keyword, expected, data } = violation;
  const message = wording(keyword, expected) ?? violation.fallback;
  return {
    path: violation.path,
    keyword,
    message: NO_GOT.has(keyword) ? message : `${message} (got ${describeValue(data)})`,
  };
}

// `#` stands for the keyword's value in the schema (`0` for `minimum: 0`).
const WORDING: Readonly<Record<string, string>> = {
  required: 'is required',
  additionalProperties: 'is not an allowed property',
  unevaluatedProperties: 'is not an allowed property',
  false: 'is not an allowed property',
  not: 'must not match the excluded schema',
  contains: 'must contain an item that matches its schema',
  uniqueItems: 'must not contain duplicate items',
  minimum: 'must be >= #',
  maximum: 'must be <= #',
  exclusiveMinimum: 'must be > #',
  exclusiveMaximum: 'must be < #',
  multipleOf: 'must be a multiple of #',
  minLength: 'must have at least # characters',
  maxLength: 'must have at most # characters',
  pattern: 'must match the pattern #',
  format: 'must be a valid #',
  minItems: 'must have at least # items',
  maxItems: 'must have at most # items',
  minProperties: 'must have at least # properties',
  maxProperties: 'must have at most # properties',
};

function wording(keyword: string, expected: unknown): string | undefined {
  const list = Array.isArray(expected) ? expected : undefined;
  switch (keyword) {
    case 'type':
      return `must be ${list ? list.join(' or ') : String(expected)}`;
    case 'enum':
      return list && `must be one of ${list.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(expected)}`;
    case 'dependentRequired':
    case 'dependencies':
      // `expected` is the key whose presence requires this one.
      return typeof expected === 'string'
        ? `is required when ${JSON.stringify(expected)} is present`
        : undefined;
    case 'anyOf':
    case 'oneOf':
      return (
        list &&
        `must match ${keyword === 'oneOf' ? 'exactly' : 'at least'} one of: ${list.map(describeSchema).join('; ')}`
      );
  }
  const template = Object.hasOwn(WORDING, keyword) ? WORDING[keyword] : undefined;
  if (template === undefined || !template.includes('#')) return template;
  return typeof expected === 'number' || typeof expected === 'string'
    ? template.replace('#', String(expected))
    : undefined;
}

function describeSchema(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) return String(schema);
  const s = schema as Record<string, unknown>;
  if ('const' in s) return JSON.stringify(s['const']);
  if (Array.isArray(s['enum'])) return s['enum'].map((v) => JSON.stringify(v)).join(' | ');
  if (typeof s['$ref'] === 'string') return s['$ref'].split('/').pop() ?? s['$ref'];
  const type = Array.isArray(s['type'])
    ? s['type'].join(' or ')
    : typeof s['type'] === 'string'
      ? s['type']
      : 'a value';
  if (type === 'object' && typeof s['properties'] === 'object' && s['properties'] !== null) {
    return `object with ${Object.keys(s['properties']).join(', ')}`;
  }
  return type;
}
