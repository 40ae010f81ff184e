// What a meta-schema check catches, for a validator that checks none: an interpreter such as
// @cfworker/json-schema reads `type: 'nonsense'` as a type no value has, or skips a `minimum` of
// `'5'`, so a mistyped schema would quietly refuse or allow every value. A schema whose keywords do
// not have the kind of value their dialect gives them does not compile.

const TYPES = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']);

// Keywords whose value is one schema.
const ONE = [
  'additionalItems',
  'additionalProperties',
  'contains',
  'contentSchema',
  'else',
  'if',
  'not',
  'propertyNames',
  'then',
  'unevaluatedItems',
  'unevaluatedProperties',
];
// Keywords whose value is a non-empty list of schemas.
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
// Keywords whose value maps names to schemas.
const MAP = ['$defs', 'definitions', 'dependentSchemas', 'patternProperties', 'properties'];
const NUMBERS = ['exclusiveMaximum', 'exclusiveMinimum', 'maximum', 'minimum'];
const COUNTS = [
  'maxContains',
  'maxItems',
  'maxLength',
  'maxProperties',
  'minContains',
  'minItems',
  'minLength',
  'minProperties',
];
const STRINGS = ['$anchor', '$dynamicAnchor', '$dynamicRef', '$id', '$ref', '$schema', 'format', 'pattern'];

/**
 * Throws `schema is invalid: data/… must …` for the first keyword (depth first, in the schema's
 * order) whose value is not of the kind its dialect takes: a type name that is not one, a bound
 * that is not a number, a count that is not a whole number, a `required` that is not a list of
 * names, a `pattern` that is not a regular expression (read with the `u` flag, as validators do),
 * a subschema that is not an object or a boolean. Keywords it does not know are left alone, with
 * what they hold.
 *
 * @example
 * checkSchemaShape({ type: 'object', properties: { a: { type: 'nonsense' } } }, '2020-12');
 * // throws: schema is invalid: data/properties/a/type must be a JSON type name or a list of them
 */
export function checkSchemaShape(schema: unknown, draft: '2020-12' | '7'): void {
  const stack: [unknown, string][] = [[schema, 'data']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, at] = next;
    if (typeof node === 'boolean') continue;
    if (typeof node !== 'object' || node === null || Array.isArray(node))
      fail(at, 'must be a schema (an object or a boolean)');
    const s = node as Record<string, unknown>;
    const later: [unknown, string][] = [];
    const has = (key: string) => Object.hasOwn(s, key);
    if (has('type')) {
      const type = s['type'];
      const names = Array.isArray(type) ? type : [type];
      if (names.length === 0 || names.some((name) => typeof name !== 'string' || !TYPES.has(name)))
        fail(`${at}/type`, 'must be a JSON type name or a list of them');
    }
    for (const key of NUMBERS)
      if (has(key) && typeof s[key] !== 'number') fail(`${at}/${key}`, 'must be a number');
    if (has('multipleOf') && !((s['multipleOf'] as number) > 0))
      fail(`${at}/multipleOf`, 'must be a number above 0');
    for (const key of COUNTS)
      if (has(key) && !(Number.isInteger(s[key]) && (s[key] as number) >= 0))
        fail(`${at}/${key}`, 'must be a whole number, 0 or more');
    for (const key of STRINGS)
      if (has(key) && typeof s[key] !== 'string') fail(`${at}/${key}`, 'must be a string');
    if (has('pattern')) regex(s['pattern'] as string, `${at}/pattern`);
    if (
      has('required') &&
      !(Array.isArray(s['required']) && s['required'].every((n) => typeof n === 'string'))
    )
      fail(`${at}/required`, 'must be a list of property names');
    if (has('enum') && !Array.isArray(s['enum'])) fail(`${at}/enum`, 'must be a list');
    if (has('uniqueItems') && typeof s['uniqueItems'] !== 'boolean')
      fail(`${at}/uniqueItems`, 'must be a boolean');
    for (const key of ONE) if (has(key)) later.push([s[key], `${at}/${key}`]);
    if (has('items')) {
      const items = s['items'];
      if (draft === '7' && Array.isArray(items))
        items.forEach((item, i) => later.push([item, `${at}/items/${i}`]));
      else later.push([items, `${at}/items`]);
    }
    for (const key of LIST) {
      if (!has(key)) continue;
      const list = s[key];
      if (!Array.isArray(list) || list.length === 0)
        fail(`${at}/${key}`, 'must be a non-empty list of schemas');
      list.forEach((item, i) => later.push([item, `${at}/${key}/${i}`]));
    }
    for (const key of MAP) {
      if (!has(key)) continue;
      const map = s[key];
      if (typeof map !== 'object' || map === null || Array.isArray(map))
        fail(`${at}/${key}`, 'must be an object of schemas');
      for (const [name, item] of Object.entries(map)) {
        if (key === 'patternProperties') regex(name, `${at}/${key}`);
        later.push([item, `${at}/${key}/${name}`]);
      }
    }
    // Read next in the schema's order: the stack takes the last pushed first.
    for (let i = later.length - 1; i >= 0; i--) stack.push(later[i] as [unknown, string]);
  }
}

function regex(source: string, at: string): void {
  try {
    new RegExp(source, 'u');
  } catch (error) {
    fail(at, `must be a regular expression (${(error as Error).message})`);
  }
}

function fail(at: string, message: string): never {
  throw new Error(`schema is invalid: ${at} ${message}`);
}
