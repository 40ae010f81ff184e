/**
 * How much a model may send. The size is checked before anything is parsed, so a 20 MB argument
 * costs a length check; the depth by one walk with its own stack, so a 100,000-deep argument
 * never overflows the call stack.
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
 * The `limits` option of a gate: each limit, or unset (`undefined` too) for its default.
 *
 * @example
 * const limits: LimitsOption = { maxDepth: 16, maxArgumentChars: process.env.MAX_ARGS ? Number(process.env.MAX_ARGS) : undefined };
 */
export type LimitsOption = { readonly [K in keyof Limits]?: number | undefined };

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
export function resolveLimits(limits: LimitsOption | undefined): Limits {
  if (limits === undefined) return DEFAULT_LIMITS;
  if (typeof limits !== 'object' || limits === null) {
    throw new TypeError(
      `createToolGate: limits must be an object such as { maxArgumentChars: 262144, maxDepth: 64 } (got ${describeLimit(limits)}); leave it out for the defaults.`,
    );
  }
  return Object.freeze({
    maxArgumentChars: limitOf(limits, 'maxArgumentChars'),
    maxDepth: limitOf(limits, 'maxDepth'),
  });
}

function limitOf(limits: { readonly [K in keyof Limits]?: number | undefined }, key: keyof Limits): number {
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

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;
const CLOSE_BRACE = 125;
const CLOSE_BRACKET = 93;

/**
 * Whether a JSON text nests objects and arrays deeper than `maxDepth`, found by one scan without
 * parsing it. Strings are skipped with `indexOf`, so text-heavy input costs little more than a
 * memchr. Malformed text is scanned as far as it goes. Arguments are parsed first and measured
 * by {@link checkValue}; this answers for text that does not parse, and for strings a repair
 * would decode.
 *
 * @example
 * nestsTooDeep('[[[]]]', 2); // true
 */
export function nestsTooDeep(text: string, maxDepth: number): boolean {
  // Text that holds no more openers than the depth allows cannot nest too deep: a native count
  // settles it without walking the text.
  if (fewerOpeners(text, maxDepth + 1)) return false;
  const length = text.length;
  let depth = 0;
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
      while (end !== -1 && nextBackslash < end) {
        let k = end - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((end - 1 - k) % 2 === 0) break; // an even run of backslashes does not escape the quote
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) break;
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** Whether `text` holds fewer than `count` of `{` and `[` together, counted natively. */
function fewerOpeners(text: string, count: number): boolean {
  let found = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++found >= count) return false;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++found >= count) return false;
  return true;
}
