/** The fields of an ESTree node this module reads (Vite's `this.parse` gives ESTree). */
export interface Node {
  readonly type: string;
  readonly start: number;
  readonly end: number;
  readonly [field: string]: unknown;
}

/**
 * A tool schema written where a build step can read it: the expression in the source, and the
 * JSON value it evaluates to.
 *
 * @example
 * const found: LiteralSchema = { node, value: { type: 'object' }, shorthand: false };
 */
export interface LiteralSchema {
  readonly node: Node;
  readonly value: Readonly<Record<string, unknown>>;
  /** Written `{ inputSchema }`: the expression is the property's name too. */
  readonly shorthand: boolean;
}

const NOT_STATIC = Symbol('not static');
const CORE = /^@toolgate\/core(\/[a-z-]+)?$/;
const SCHEMA_KEYS = new Set(['inputSchema', 'outputSchema']);

const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';

function children(node: Node): Node[] {
  const found: Node[] = [];
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) for (const item of value) if (isNode(item)) found.push(item);
    if (isNode(value)) found.push(value);
  }
  return found;
}

function walk(node: Node, visit: (node: Node) => void): void {
  visit(node);
  for (const child of children(node)) walk(child, visit);
}

const name = (node: unknown): string | undefined =>
  isNode(node) && node.type === 'Identifier' ? (node['name'] as string) : undefined;

/** Every name a pattern binds (`a`, `{ a, b: [c] }`, `...d`). */
function boundNames(pattern: unknown, into: string[]): void {
  if (!isNode(pattern)) return;
  if (pattern.type === 'Identifier') into.push(pattern['name'] as string);
  else if (pattern.type === 'ObjectPattern')
    for (const p of pattern['properties'] as Node[])
      boundNames(p.type === 'RestElement' ? p : p['value'], into);
  else if (pattern.type === 'ArrayPattern')
    for (const e of pattern['elements'] as unknown[]) boundNames(e, into);
  else if (pattern.type === 'AssignmentPattern') boundNames(pattern['left'], into);
  else if (pattern.type === 'RestElement') boundNames(pattern['argument'], into);
}

/** How many times each name is declared anywhere in the module. */
function declarations(program: Node): Map<string, number> {
  const names: string[] = [];
  walk(program, (node) => {
    if (node.type === 'VariableDeclarator') boundNames(node['id'], names);
    else if (node.type === 'CatchClause') boundNames(node['param'], names);
    else if (/Function|Class/.test(node.type)) {
      boundNames(node['id'], names);
      for (const param of (node['params'] as unknown[] | undefined) ?? []) boundNames(param, names);
    } else if (node.type.startsWith('Import') && node.type.endsWith('Specifier'))
      boundNames(node['local'], names);
  });
  const counts = new Map<string, number>();
  for (const declared of names) counts.set(declared, (counts.get(declared) ?? 0) + 1);
  return counts;
}

/** The module's top-level `const name = <init>` declarations, each name declared only there. */
function topLevelConsts(program: Node): Map<string, Node> {
  const counts = declarations(program);
  const consts = new Map<string, Node>();
  for (const statement of program['body'] as Node[]) {
    const declaration = statement.type === 'ExportNamedDeclaration' ? statement['declaration'] : statement;
    if (!isNode(declaration) || declaration.type !== 'VariableDeclaration' || declaration['kind'] !== 'const')
      continue;
    for (const declarator of declaration['declarations'] as Node[]) {
      const id = name(declarator['id']);
      if (id !== undefined && counts.get(id) === 1 && isNode(declarator['init']))
        consts.set(id, declarator['init']);
    }
  }
  return consts;
}

/** The JSON value an expression is, when it is one written out (no calls, spreads or variables). */
function staticValue(node: unknown, consts: Map<string, Node>, depth = 0): unknown {
  if (!isNode(node) || depth > 64) return NOT_STATIC;
  const next = (child: unknown) => staticValue(child, consts, depth + 1);
  switch (node.type) {
    case 'Literal':
      return 'regex' in node || 'bigint' in node ? NOT_STATIC : node['value'];
    case 'TemplateLiteral': {
      const quasis = node['quasis'] as Node[];
      return quasis.length === 1
        ? ((quasis[0]?.['value'] as { cooked?: string }).cooked ?? NOT_STATIC)
        : NOT_STATIC;
    }
    case 'UnaryExpression': {
      const value = next(node['argument']);
      if (typeof value !== 'number') return NOT_STATIC;
      return node['operator'] === '-' ? -value : node['operator'] === '+' ? value : NOT_STATIC;
    }
    case 'ArrayExpression': {
      const items = (node['elements'] as unknown[]).map((e) =>
        isNode(e) && e.type !== 'SpreadElement' ? next(e) : NOT_STATIC,
      );
      return items.includes(NOT_STATIC) ? NOT_STATIC : items;
    }
    case 'ObjectExpression':
      return staticObject(node, next);
    case 'Identifier':
      return consts.has(node['name'] as string) ? next(consts.get(node['name'] as string)) : NOT_STATIC;
    case 'ParenthesizedExpression':
    case 'TSAsExpression':
    case 'TSSatisfiesExpression':
      return next(node['expression']);
    default:
      return NOT_STATIC;
  }
}

function staticObject(node: Node, next: (child: unknown) => unknown): unknown {
  const object: Record<string, unknown> = {};
  for (const property of node['properties'] as Node[]) {
    if (property.type !== 'Property' || property['kind'] !== 'init' || property['method'] === true)
      return NOT_STATIC;
    const key = property['key'];
    const computed = property['computed'] === true;
    const keyName =
      !computed && name(key) !== undefined
        ? name(key)
        : isNode(key) && key.type === 'Literal'
          ? key['value']
          : undefined;
    if (typeof keyName !== 'string' && typeof keyName !== 'number') return NOT_STATIC;
    // `{ __proto__: x }` sets the prototype of the object the app builds; it is not a property.
    if (keyName === '__proto__' && !computed && property['shorthand'] !== true) return NOT_STATIC;
    const value = next(property['value']);
    if (value === NOT_STATIC) return NOT_STATIC;
    Object.defineProperty(object, String(keyName), {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return object;
}

/**
 * Every `defineTool({ ... })` schema of a module (a call of `defineTool` imported from
 * `@toolgate/core` or one of its entries) that is an object written out, or a `const` of the
 * module holding one, with the value it is.
 *
 * @example
 * const found = literalSchemas(this.parse(code));
 */
export function literalSchemas(program: Node): LiteralSchema[] {
  const direct = new Set<string>();
  const namespaces = new Set<string>();
  for (const statement of program['body'] as Node[]) {
    if (statement.type !== 'ImportDeclaration' || !CORE.test(String((statement['source'] as Node)['value'])))
      continue;
    for (const specifier of statement['specifiers'] as Node[]) {
      const local = name(specifier['local']);
      if (local === undefined) continue;
      if (specifier.type === 'ImportNamespaceSpecifier') namespaces.add(local);
      else if (specifier.type === 'ImportSpecifier' && name(specifier['imported']) === 'defineTool')
        direct.add(local);
    }
  }
  if (direct.size === 0 && namespaces.size === 0) return [];
  const consts = topLevelConsts(program);
  const found: LiteralSchema[] = [];
  walk(program, (node) => {
    if (node.type !== 'CallExpression' || !isDefineTool(node['callee'], direct, namespaces)) return;
    const config = (node['arguments'] as unknown[])[0];
    if (!isNode(config) || config.type !== 'ObjectExpression') return;
    for (const property of config['properties'] as Node[]) {
      if (property.type !== 'Property' || property['computed'] === true) continue;
      if (!SCHEMA_KEYS.has(name(property['key']) ?? '')) continue;
      const value = staticValue(property['value'], consts);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
      found.push({
        node: property['value'] as Node,
        value: value as Record<string, unknown>,
        shorthand: property['shorthand'] === true,
      });
    }
  });
  return found;
}

function isDefineTool(callee: unknown, direct: Set<string>, namespaces: Set<string>): boolean {
  if (direct.has(name(callee) ?? '')) return true;
  return (
    isNode(callee) &&
    callee.type === 'MemberExpression' &&
    callee['computed'] !== true &&
    namespaces.has(name(callee['object']) ?? '') &&
    name(callee['property']) === 'defineTool'
  );
}
