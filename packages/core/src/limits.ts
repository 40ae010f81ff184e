import { escapePointer } from './schema.ts';

/**
 * How much a model may send. Checked before anything is parsed, so a 20 MB or 100,000-deep
 * argument costs a length check and one bounded scan, never a parse or a stack overflow.
 *
 * @example
 * createToolGate({ tools, limits: { maxArgumentChars: 64 * 1024, maxDepth: 16 } });
 */
export interface Limits {
  /** Longest arguments string, in UTF-16 code units (default 262,144). */
  readonly maxArgumentChars: number;
  /** Deepest nesting of objects and arrays (default 64). */
  readonly maxDepth: number;
}

/**
 * The default limits: 256 KiB of arguments, nesting depth 64.
 *
 * @example
 * const limits = { ...DEFAULT_LIMITS, maxDepth: 16 };
 */
export const DEFAULT_LIMITS: Limits = Object.freeze({ maxArgumentChars: 262_144, maxDepth: 64 });

/**
 * The limits a gate enforces, from what its options say: a limit left unset (`undefined`) takes
 * its default, so a config value that is missing never switches a limit off. Anything else that
 * is not a positive whole number is a programmer error, thrown at once with the option's name.
 *
 * @example
 * resolveLimits({ maxDepth: 16 }); // { maxArgumentChars: 262144, maxDepth: 16 }
 * resolveLimits({ maxArgumentChars: undefined }); // DEFAULT_LIMITS' values
 * resolveLimits({ maxDepth: 0 }); // throws: limits.maxDepth must be a positive whole number (got 0)
 */
export function resolveLimits(limits: Partial<Limits> | undefined): Limits {
  if (limits === undefined) return DEFAULT_LIMITS;
  if (typeof limits !== 'object' || limits === null) {
    throw new TypeError(
      `createToolGate: limits must be an object such as { maxArgumentChars: 262144, maxDepth: 64 } (got ${describeLimit(limits)}); leave it out for the defaults.`,
    );
  }
  return Object.freeze({ maxArgumentChars: limitOf(limits, 'maxArgumentChars'), maxDepth: limitOf(limits, 'maxDepth') });
}

function limitOf(limits: Partial<Limits>, key: keyof Limits): number {
  const value: unknown = limits[key];
  if (value === undefined) return DEFAULT_LIMITS[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new TypeError(
      `createToolGate: limits.${key} must be a positive whole number (got ${describeLimit(value)}); leave it unset for the default (${DEFAULT_LIMITS[key]}).`,
    );
  }
  return value;
}

function describeLimit(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return value === null ? 'null' : typeof value;
}

/**
 * What one pass over a JSON text found: whether it nests deeper than allowed, and whether some
 * string in it may be the key `__proto__` (then the parsed value is checked precisely).
 *
 * @example
 * const { tooDeep, mayHaveProtoKey }: JsonScan = scanJson(text, 64);
 */
export interface JsonScan {
  readonly tooDeep: boolean;
  readonly mayHaveProtoKey: boolean;
}

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;
const CLOSE_BRACE = 125;
const CLOSE_BRACKET = 93;

/**
 * Scans a JSON text once, without parsing it, for nesting depth and possible `__proto__` keys.
 * Strings are skipped with `indexOf`, so text-heavy arguments cost little more than a memchr.
 * Malformed text is scanned as far as it goes; `JSON.parse` reports the error afterwards.
 *
 * @example
 * scanJson('[[[]]]', 2).tooDeep; // true
 */
export function scanJson(text: string, maxDepth: number): JsonScan {
  // Text that holds no more openers than the depth allows cannot nest too deep: a native count
  // settles it without walking the text (a file's content, with its many escaped quotes, is the
  // common case). Any spelling of a `__proto__` key needs the letters or a \u escape.
  if (fewerOpeners(text, maxDepth + 1)) {
    return { tooDeep: false, mayHaveProtoKey: text.includes('__proto__') || text.includes('\\u') };
  }
  const length = text.length;
  let depth = 0;
  let mayHaveProtoKey = false;
  let nextBackslash = text.indexOf('\\');
  if (nextBackslash === -1) nextBackslash = length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      let end = text.indexOf('"', i + 1);
      if (nextBackslash < start) {
        nextBackslash = text.indexOf('\\', start);
        if (nextBackslash === -1) nextBackslash = length;
      }
      let escaped = false;
      while (end !== -1 && nextBackslash < end) {
        escaped = true;
        let k = end - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((end - 1 - k) % 2 === 0) break; // an even run of backslashes does not escape the quote
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) break;
      const rawLength = end - start - 1;
      if (rawLength === 9 ? text.startsWith('__proto__', start + 1) : escaped && rawLength <= 54 && decodesToProto(text, start, end)) {
        mayHaveProtoKey = true;
      }
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return { tooDeep: true, mayHaveProtoKey };
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return { tooDeep: false, mayHaveProtoKey };
}

/** Whether `text` holds fewer than `count` of `{` and `[` together, counted natively. */
function fewerOpeners(text: string, count: number): boolean {
  let found = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++found >= count) return false;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++found >= count) return false;
  return true;
}

function decodesToProto(text: string, start: number, end: number): boolean {
  try {
    return JSON.parse(text.slice(start, end + 1)) === '__proto__';
  } catch {
    return false;
  }
}

/**
 * What a bounded walk over an object found wrong, if anything. `path` is a JSON pointer.
 *
 * @example
 * const problem: ValueProblem = { kind: 'proto_key', path: '/options/__proto__' };
 */
export type ValueProblem =
  | { readonly kind: 'too_large' }
  | { readonly kind: 'too_deep' }
  | { readonly kind: 'proto_key'; readonly path: string }
  | { readonly kind: 'not_json'; readonly path: string; readonly found: string };

/**
 * Copies arguments that arrived as an object (Anthropic, Gemini, MCP, AI SDK) into plain JSON
 * data, with the same limits as text: it counts roughly the characters the JSON would take and
 * stops as soon as a limit is passed, so a huge, wide or cyclic object costs at most the limit.
 * Refuses `__proto__` keys and values JSON cannot carry (functions, class instances, `undefined`,
 * non-finite numbers). The copy is what gets validated and run, so a caller that changes its
 * object afterwards (while a person decides, say) cannot change what the tool receives.
 *
 * @example
 * copyValue({ a: () => 1 }, DEFAULT_LIMITS); // { kind: 'not_json', path: '/a', found: 'function' }
 * copyValue({ a: [1] }, DEFAULT_LIMITS); // { kind: 'ok', value: { a: [1] } }
 */
export function copyValue(value: unknown, limits: Limits): ValueProblem | { readonly kind: 'ok'; readonly value: unknown } {
  let budget = limits.maxArgumentChars;
  let problem: ValueProblem | undefined;
  const fail = (found: ValueProblem): undefined => {
    problem = found;
    return undefined;
  };
  const visit = (node: unknown, depth: number, path: string): unknown => {
    switch (typeof node) {
      case 'string':
        budget -= node.length + 3;
        return budget < 0 ? fail({ kind: 'too_large' }) : node;
      case 'number':
        budget -= 9;
        if (!Number.isFinite(node)) return fail({ kind: 'not_json', path, found: String(node) });
        return budget < 0 ? fail({ kind: 'too_large' }) : node;
      case 'boolean':
        budget -= 6;
        return budget < 0 ? fail({ kind: 'too_large' }) : node;
      case 'object':
        break;
      default:
        return fail({ kind: 'not_json', path, found: typeof node });
    }
    if (node === null) {
      budget -= 5;
      return budget < 0 ? fail({ kind: 'too_large' }) : null;
    }
    if (depth >= limits.maxDepth) return fail({ kind: 'too_deep' });
    // Every container and element is charged (brackets, commas), so even empty arrays add up.
    if ((budget -= 2) < 0) return fail({ kind: 'too_large' });
    if (Array.isArray(node)) {
      const copy: unknown[] = [];
      for (let i = 0; i < node.length; i++) {
        const item = visit(node[i], depth + 1, `${path}/${i}`);
        if (problem !== undefined) return undefined;
        copy.push(item);
      }
      return copy;
    }
    const proto: unknown = Object.getPrototypeOf(node);
    if (proto !== Object.prototype && proto !== null) {
      return fail({ kind: 'not_json', path, found: (node as { constructor?: { name?: string } }).constructor?.name ?? 'object' });
    }
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(node)) {
      if (key === '__proto__') return fail({ kind: 'proto_key', path: `${path}/__proto__` });
      budget -= key.length + 3;
      const item = visit((node as Record<string, unknown>)[key], depth + 1, `${path}/${escapePointer(key)}`);
      if (problem !== undefined) return undefined;
      copy[key] = item;
    }
    return copy;
  };
  const copy = visit(value, 0, '');
  return problem ?? { kind: 'ok', value: copy };
}
