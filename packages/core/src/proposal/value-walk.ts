// The walk every argument value takes before it is validated, however it arrived: as text just
// parsed, or as an object a provider handed over. A value is hostile until walked: it may nest past
// any stack, hold a `__proto__` key, a number JSON cannot carry, a function, or a cycle.
import { escapePointer } from '../schema/schema.ts';
import type { Limits } from './limits.ts';

/**
 * What a bounded walk over a value found wrong, if anything. `path` is a JSON pointer.
 *
 * @example
 * const problem: ValueProblem = { kind: 'proto_key', path: '/options/__proto__' };
 */
export type ValueProblem =
  | { readonly kind: 'too_large' }
  | { readonly kind: 'too_deep' }
  | { readonly kind: 'proto_key'; readonly path: string }
  | { readonly kind: 'not_finite'; readonly path: string; readonly found: number }
  | { readonly kind: 'not_json'; readonly path: string; readonly found: string };

/**
 * A value that passed the walk, or what the walk found wrong with it.
 *
 * @example
 * const reading: ValueReading = copyValue({ q: 1 }, DEFAULT_LIMITS); // { kind: 'ok', value: { q: 1 } }
 */
export type ValueReading = ValueProblem | { readonly kind: 'ok'; readonly value: unknown };

/**
 * Copies arguments that arrived as an object (Anthropic, Gemini, MCP, AI SDK) into plain JSON
 * data, under the same rules as text. The size is the length of the object's compact JSON text,
 * counted as the walk goes, which stops as soon as the limit is passed, so a huge, wide or cyclic
 * object costs at most the limit; a value over the limit is `too_large` whatever else is wrong
 * with it, as text over the limit is refused before it is parsed. Refuses what
 * {@link checkValue} refuses, and values JSON cannot carry (functions, class instances,
 * `undefined`). The copy is what gets validated and run, so a caller that changes its object
 * afterwards (while a person decides, say) cannot change what the tool receives. With `freeze`,
 * each container of the copy is frozen as the walk fills it, so the copy is deeply frozen without
 * a second pass (the gate's record and its tool get this one value).
 *
 * @example
 * copyValue({ a: () => 1 }, DEFAULT_LIMITS); // { kind: 'not_json', path: '/a', found: 'function' }
 * copyValue({ a: [1] }, DEFAULT_LIMITS); // { kind: 'ok', value: { a: [1] } }
 */
export function copyValue(value: unknown, limits: Limits, freeze = false): ValueReading {
  return walkValue(value, limits.maxDepth, limits.maxArgumentChars, true, freeze);
}

/**
 * Checks a value that `JSON.parse` has just made, so it is already a fresh plain copy no caller
 * can reach: it must nest no deeper than `maxDepth`, hold no `__proto__` key (an ordinary own key
 * after `JSON.parse`, which `Object.assign` or a naive merge in a tool would turn into a prototype
 * change) and no number that is not finite (`1e400` parses to `Infinity`). It reads in the order
 * {@link copyValue} reads, so text and an object holding the same value get the same answer, at
 * the same path. It does not copy: the parsed value is already one. It freezes each object and
 * array once it has read it, so a value that passes is deeply frozen by the walk that checked it:
 * the record keeps it and the tool runs with it, with no second pass and no copy.
 *
 * @example
 * checkValue(JSON.parse('{"amount_cents":1e400}'), 64); // { kind: 'not_finite', path: '/amount_cents', found: Infinity }
 */
export function checkValue(value: unknown, maxDepth: number): ValueReading {
  // `for…in` lists inherited keys too; where something has made one of Object.prototype's keys
  // enumerable (a polluted page), the general walk lists keys with Object.keys instead.
  return inheritsEnumerableKeys()
    ? walkValue(value, maxDepth, Infinity, false, true)
    : walkParsed(value, maxDepth);
}

/** Past this depth limit the walk of a parsed value keeps its own stack instead of recursing. */
const RECURSION_DEPTH = 200;

/**
 * The walk for what `JSON.parse` made: it was measured as text and holds nothing JSON cannot
 * carry, so of its leaves only a number needs a look, and as a tree it needs no record of where
 * each container sits until a problem is found. Decides exactly as {@link walkValue} does, reading
 * in its order: recursively (no allocation; most arguments nest a few levels) under a depth limit
 * no stack minds, with a stack of its own under a deeper one.
 */
function walkParsed(root: unknown, maxDepth: number): ValueReading {
  if (typeof root !== 'object' || root === null) {
    return typeof root === 'number' && root - root !== 0
      ? { kind: 'not_finite', path: '', found: root }
      : { kind: 'ok', value: root };
  }
  if (maxDepth < 1) return { kind: 'too_deep' };
  if (maxDepth > RECURSION_DEPTH) return walkParsedDeep(root, maxDepth);
  // Most arguments pass: one pass decides that. Only a value with a problem is read again, in the
  // order that tells which problem is the first (the pass froze what it read; the value is refused).
  if (passesParsed(root, 1, maxDepth)) return { kind: 'ok', value: root };
  return scanParsed(root, root, 1, maxDepth) ?? { kind: 'ok', value: root };
}

/**
 * Whether a parsed container and what it holds pass the checks {@link scanParsed} makes, read in
 * one pass (each container's values once, its containers as they come), freezing each container
 * once what it holds has passed. `depth` is the depth of the values it holds.
 */
function passesParsed(node: object, depth: number, maxDepth: number): boolean {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const item: unknown = node[i];
      if (typeof item === 'object') {
        if (item === null) continue;
        if (depth >= maxDepth || !passesParsed(item, depth + 1, maxDepth)) return false;
      } else if (typeof item === 'number' && item - item !== 0) return false;
    }
  } else {
    const source = node as Readonly<Record<string, unknown>>;
    for (const key in source) {
      if (key === '__proto__') return false;
      const item = source[key];
      if (typeof item === 'object') {
        if (item === null) continue;
        if (depth >= maxDepth || !passesParsed(item, depth + 1, maxDepth)) return false;
      } else if (typeof item === 'number' && item - item !== 0) return false;
    }
  }
  Object.freeze(node);
  return true;
}

/**
 * One container of a parsed tree and, recursively, what it holds, read as the deep walk reads:
 * first every value the container holds (its numbers, its keys, how deep what it holds goes), then
 * each container in it, in order. `depth` is the depth of the values it holds.
 */
function scanParsed(root: object, node: object, depth: number, maxDepth: number): ValueProblem | undefined {
  let nested = false;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const item: unknown = node[i];
      if (typeof item === 'object') {
        if (item === null) continue;
        if (depth >= maxDepth) return { kind: 'too_deep' };
        nested = true;
      } else if (typeof item === 'number' && item - item !== 0) {
        return { kind: 'not_finite', path: pointerIn(root, node, i), found: item };
      }
    }
    Object.freeze(node);
    if (!nested) return undefined;
    for (let i = 0; i < node.length; i++) {
      const item: unknown = node[i];
      if (typeof item !== 'object' || item === null) continue;
      const problem = scanParsed(root, item, depth + 1, maxDepth);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  const source = node as Readonly<Record<string, unknown>>;
  for (const key in source) {
    if (key === '__proto__') return { kind: 'proto_key', path: pointerIn(root, node, key) };
    const item = source[key];
    if (typeof item === 'object') {
      if (item === null) continue;
      if (depth >= maxDepth) return { kind: 'too_deep' };
      nested = true;
    } else if (typeof item === 'number' && item - item !== 0) {
      return { kind: 'not_finite', path: pointerIn(root, node, key), found: item };
    }
  }
  Object.freeze(node);
  if (!nested) return undefined;
  for (const key in source) {
    const item = source[key];
    if (typeof item !== 'object' || item === null) continue;
    const problem = scanParsed(root, item, depth + 1, maxDepth);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** {@link walkParsed} under a depth limit deeper than recursion may go: containers still to read wait on its own stack, in document order. */
function walkParsedDeep(root: object, maxDepth: number): ValueReading {
  const nodes: object[] = [root];
  // The depth of each waiting container's children.
  const depths: number[] = [1];
  for (let node = nodes.pop(); node !== undefined; node = nodes.pop()) {
    const depth = depths.pop() as number;
    const first = nodes.length;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'object') {
          if (item === null) continue;
          if (depth >= maxDepth) return { kind: 'too_deep' };
          nodes.push(item);
          depths.push(depth + 1);
        } else if (typeof item === 'number' && item - item !== 0) {
          return { kind: 'not_finite', path: pointerIn(root, node, i), found: item };
        }
      }
    } else {
      const source = node as Readonly<Record<string, unknown>>;
      for (const key in source) {
        if (key === '__proto__') return { kind: 'proto_key', path: pointerIn(root, node, key) };
        const item = source[key];
        if (typeof item === 'object') {
          if (item === null) continue;
          if (depth >= maxDepth) return { kind: 'too_deep' };
          nodes.push(item);
          depths.push(depth + 1);
        } else if (typeof item === 'number' && item - item !== 0) {
          return { kind: 'not_finite', path: pointerIn(root, node, key), found: item };
        }
      }
    }
    Object.freeze(node);
    // Children were pushed in order; reversed, the first is read next.
    for (let a = first, b = nodes.length - 1; a < b; a++, b--) {
      const swapNode = nodes[a] as object;
      nodes[a] = nodes[b] as object;
      nodes[b] = swapNode;
      const swapDepth = depths[a] as number;
      depths[a] = depths[b] as number;
      depths[b] = swapDepth;
    }
  }
  return { kind: 'ok', value: root };
}

/** The JSON pointer of `key` in `container`, somewhere in the tree `root`; searched only when a problem is reported. */
function pointerIn(root: object, container: object, key: string | number): string {
  const stack: Frame[] = [
    { source: root, array: Array.isArray(root), copy: undefined, depth: 0, parent: undefined, key: '' },
  ];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if (frame.source === container) return pointerOf(frame, key);
    const source = frame.source as Readonly<Record<string, unknown>>;
    for (const k of frame.array ? (source as unknown as unknown[]).keys() : Object.keys(source)) {
      const item = source[k];
      if (typeof item === 'object' && item !== null) {
        stack.push({
          source: item,
          array: Array.isArray(item),
          copy: undefined,
          depth: frame.depth + 1,
          parent: frame,
          key: k,
        });
      }
    }
  }
  return ''; // not reached: the container is in the tree
}

/** An object or array the walk has reached and not yet read. */
interface Frame {
  readonly source: object;
  readonly array: boolean;
  readonly copy: unknown[] | Record<string, unknown> | undefined;
  readonly depth: number;
  readonly parent: Frame | undefined;
  readonly key: string | number;
}

/** Where one walk is. */
interface Walk {
  readonly maxDepth: number;
  /** Whether there is a size limit to count against; a value measured as text has none left. */
  readonly counting: boolean;
  budget: number;
  copying: boolean;
  /** Whether each container (the copy, when copying) is frozen once the walk has filled it. */
  readonly freeze: boolean;
  problem: ValueProblem | undefined;
  readonly stack: Frame[];
}

/**
 * The walk over a value from anywhere: depth, `__proto__` keys, finite numbers, plain JSON data,
 * and (when `maxChars` is finite) the size, making a copy when asked, in one pass. It keeps its
 * own stack instead of recursing, so no input can overflow the call stack, and reads containers
 * in document order so the first problem it reports is the same for every form of the same value.
 */
function walkValue(
  root: unknown,
  maxDepth: number,
  maxChars: number,
  copying: boolean,
  freeze: boolean,
): ValueReading {
  // The state is an object literal, not a class instance or a closure: a literal's shape lives as
  // long as the code, so optimised code that reads it is not thrown away at every garbage
  // collection, and fields are cheaper than variables captured by closures.
  const walk: Walk = {
    maxDepth,
    counting: maxChars !== Infinity,
    budget: maxChars,
    copying,
    freeze,
    problem: undefined,
    stack: [],
  };
  const top = take(walk, root, undefined, '');
  const stack = walk.stack;
  for (let frame = stack.pop(); frame !== undefined && going(walk); frame = stack.pop()) {
    const first = stack.length;
    if (frame.array) {
      const source = frame.source as readonly unknown[];
      const copy = frame.copy as unknown[] | undefined;
      if (walk.counting && source.length > 1) walk.budget -= source.length - 1;
      for (let i = 0; i < source.length && going(walk); i++) {
        const item = take(walk, source[i], frame, i);
        if (walk.copying && copy !== undefined) copy.push(item);
      }
    } else {
      const source = frame.source as Readonly<Record<string, unknown>>;
      const copy = frame.copy as Record<string, unknown> | undefined;
      const keys = Object.keys(source);
      if (walk.counting && keys.length > 1) walk.budget -= keys.length - 1;
      for (let i = 0; i < keys.length && going(walk); i++) {
        const key = keys[i] as string;
        if (key === '__proto__') {
          found(walk, { kind: 'proto_key', path: pointerOf(frame, key) });
          if (!going(walk)) break;
        }
        if (walk.counting) walk.budget -= stringLength(key, walk.budget) + 1;
        const item = take(walk, source[key], frame, key);
        if (walk.copying && copy !== undefined) copy[key] = item;
      }
    }
    // Filled: a frozen container's children are still filled in later, each a container of its own.
    if (walk.freeze && walk.problem === undefined) Object.freeze(frame.copy ?? frame.source);
    // Children were pushed in order; reversed, the first is read next.
    for (let a = first, b = stack.length - 1; a < b; a++, b--) {
      const swap = stack[a] as Frame;
      stack[a] = stack[b] as Frame;
      stack[b] = swap;
    }
  }
  if (walk.budget < 0) return { kind: 'too_large' };
  return walk.problem ?? { kind: 'ok', value: walk.copying ? top : root };
}

/** Without a size to measure, the first problem ends the walk; with one, only the size does. */
function going(walk: Walk): boolean {
  return walk.budget >= 0 && (walk.counting || walk.problem === undefined);
}

function found(walk: Walk, problem: ValueProblem): void {
  if (walk.problem !== undefined) return;
  walk.problem = problem;
  // Past the first problem the walk only goes on to measure the size, and copies nothing.
  walk.copying = false;
}

/** Checks and charges one value found at `key` in `parent` (the root when there is none); returns what the copy holds there. */
function take(walk: Walk, item: unknown, parent: Frame | undefined, key: string | number): unknown {
  if (typeof item === 'object' && item !== null) return open(walk, item, parent, key);
  if (typeof item === 'string') {
    if (walk.counting) walk.budget -= stringLength(item, walk.budget);
  } else if (typeof item === 'number') {
    if (walk.counting) walk.budget -= Object.is(item, -0) ? 2 : String(item).length;
    if (item - item !== 0) found(walk, { kind: 'not_finite', path: pointerOf(parent, key), found: item });
  } else if (typeof item === 'boolean' || item === null) {
    if (walk.counting) walk.budget -= item === false ? 5 : 4;
  } else {
    found(walk, { kind: 'not_json', path: pointerOf(parent, key), found: typeof item });
    return undefined;
  }
  return item;
}

function open(walk: Walk, item: object, parent: Frame | undefined, key: string | number): unknown {
  const array = Array.isArray(item);
  if (!array) {
    const proto: unknown = Object.getPrototypeOf(item);
    if (proto !== Object.prototype && proto !== null) {
      const name = (item as { constructor?: { name?: unknown } }).constructor?.name;
      found(walk, {
        kind: 'not_json',
        path: pointerOf(parent, key),
        found: typeof name === 'string' ? name : 'object',
      });
      return undefined;
    }
  }
  const depth = parent === undefined ? 0 : parent.depth + 1;
  if (depth >= walk.maxDepth) found(walk, { kind: 'too_deep' });
  if (walk.counting) walk.budget -= 2;
  const copy = walk.copying ? (array ? [] : {}) : undefined;
  walk.stack.push({ source: item, array, copy, depth, parent, key });
  return copy;
}

/** Whether Object.prototype (or what it inherits) has an enumerable key, which `for…in` would list on every object. */
function inheritsEnumerableKeys(): boolean {
  for (const key in {}) if (key !== undefined) return true;
  return false;
}

// eslint-disable-next-line no-control-regex -- the characters JSON.stringify writes as escapes
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** How long `text` is as a JSON string; a string already longer than `budget` is not searched for escapes. */
function stringLength(text: string, budget: number): number {
  const plain = text.length + 2;
  return plain <= budget && ESCAPED.test(text) ? JSON.stringify(text).length : plain;
}

/** The JSON pointer of `key` in `frame`, built only when a problem is reported. */
function pointerOf(frame: Frame | undefined, key: string | number): string {
  if (frame === undefined) return '';
  const keys: (string | number)[] = [key];
  for (let f: Frame = frame; f.parent !== undefined; f = f.parent) keys.push(f.key);
  let pointer = '';
  for (let i = keys.length - 1; i >= 0; i--) {
    const k = keys[i] as string | number;
    pointer += `/${typeof k === 'string' ? escapePointer(k) : k}`;
  }
  return pointer;
}
