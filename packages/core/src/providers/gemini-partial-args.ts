import type { Limits } from '../proposal/limits.ts';

/**
 * What one Vertex `partialArgs` entry did to the arguments being built:
 * - `ok`: applied (or nothing to apply);
 * - `too_large`: the arguments passed `maxArgumentChars`; `text` is their JSON so far, for the gate to refuse;
 * - `too_deep`: the path nests past `maxDepth`; the arguments now hold one level too many, for the gate to refuse;
 * - `unreadable`: no JSON object can be what the entry says (a path that is not one, skips array
 *   elements, or steps through a value of another kind); `message` says why.
 *
 * @example
 * const step: PartialArgsStep = { kind: 'unreadable', message: 'the partialArgs path "$.a[-1]" is not …' };
 */
export type PartialArgsStep =
  | { readonly kind: 'ok' }
  | { readonly kind: 'too_large'; readonly text: string }
  | { readonly kind: 'too_deep' }
  | { readonly kind: 'unreadable'; readonly message: string };

/**
 * A call's arguments built from Vertex `partialArgs` entries by JSON path, never larger or deeper
 * than the gate's limits allow, whatever the entries say.
 *
 * @example
 * const args: PartialArgs = createPartialArgs({}, gate.limits);
 * args.apply({ jsonPath: '$.path', stringValue: 'notes/' });
 * args.value; // { path: 'notes/' }
 */
export interface PartialArgs {
  /** The arguments so far. Read-only for callers; copy it before handing it out. */
  readonly value: Record<string, unknown>;
  /** Applies one `partialArgs` entry. Never throws. */
  readonly apply: (partial: unknown) => PartialArgsStep;
}

type Step = { readonly key: string | number; readonly end: number };

const OK: PartialArgsStep = { kind: 'ok' };
const ABSENT: unique symbol = Symbol('absent');

/**
 * Starts building a streamed call's arguments from `initial` (the `args` its opening
 * `functionCall` carried, already within the limits).
 *
 * A path is `$` followed by `.name`, `['name']`, `["name"]` or `[index]` steps. A string written
 * again continues (Vertex streams a long string across chunks); another scalar written again
 * replaces the old one. An array index may be at most the array's length (the next element), so
 * a path cannot make holes, and a path that steps into a value of another kind is refused rather
 * than overwriting it. The JSON size is kept as an upper bound and checked exactly when it passes
 * the limit, so the limit is never crossed and never enforced early.
 *
 * @example
 * const args = createPartialArgs({}, { maxArgumentChars: 1_000, maxDepth: 8 });
 * args.apply({ jsonPath: '$.guests[0].name', stringValue: 'Ana' });
 * args.value; // { guests: [{ name: 'Ana' }] }
 * args.apply({ jsonPath: '$.guests[5].name', stringValue: 'Bo' }).kind; // 'unreadable'
 */
export function createPartialArgs(initial: Record<string, unknown>, limits: Limits): PartialArgs {
  const value: Record<string, unknown> = initial;
  let size = JSON.stringify(value).length;

  function apply(partial: unknown): PartialArgsStep {
    if (typeof partial !== 'object' || partial === null || Array.isArray(partial)) return OK;
    const entry = partial as Record<string, unknown>;
    const path = entry['jsonPath'];
    if (typeof path !== 'string') return OK;
    const read = scalarOf(entry);
    if (read === ABSENT) return OK;
    if (read === undefined)
      return unreadable(`the partialArgs entry for ${show(path)} has a value of the wrong type`);
    const steps = parsePath(path);
    if (steps === undefined || steps.length === 0) {
      return unreadable(
        `the partialArgs path ${show(path)} is not a path to a place in the arguments ($, then .name, ['name'] or [index] steps)`,
      );
    }
    let node: Record<string, unknown> | unknown[] = value;
    for (let i = 0; i < steps.length; i++) {
      const { key, end } = steps[i] as Step;
      if (Array.isArray(node) !== (typeof key === 'number')) {
        const at = show(path.slice(0, steps[i - 1]?.end ?? 1));
        return unreadable(
          `the partialArgs path ${show(path)} uses ${at}, ${Array.isArray(node) ? 'an array, as an object' : 'an object, as an array'}`,
        );
      }
      const current = childOf(node, key);
      if (typeof key === 'number' && current === ABSENT && key > (node as unknown[]).length) {
        return unreadable(
          `the partialArgs path ${show(path)} skips array elements (index ${key} of an array of ${(node as unknown[]).length})`,
        );
      }
      if (i === steps.length - 1) return write(node, key, current, read, path);
      if (current === ABSENT) {
        // The container this step makes sits at depth i + 1; the gate refuses one at maxDepth.
        const child: Record<string, unknown> | unknown[] =
          typeof (steps[i + 1] as Step).key === 'number' ? [] : {};
        add(node, key, child, 2);
        if (i + 1 >= limits.maxDepth) return { kind: 'too_deep' };
        node = child;
        continue;
      }
      if (typeof current !== 'object' || current === null) {
        return unreadable(
          `the partialArgs path ${show(path)} steps into ${show(path.slice(0, end))}, which holds ${kindOf(current)}`,
        );
      }
      node = current as Record<string, unknown> | unknown[];
    }
    return OK;
  }

  function write(
    node: Record<string, unknown> | unknown[],
    key: string | number,
    current: unknown,
    next: unknown,
    path: string,
  ): PartialArgsStep {
    if (current === ABSENT) {
      add(node, key, next, jsonLength(next));
      return checkSize();
    }
    if (typeof current === 'object' && current !== null) {
      return unreadable(`the partialArgs path ${show(path)} writes a value over ${kindOf(current)}`);
    }
    if (typeof current === 'string' && typeof next === 'string') {
      // An upper bound: escaping the pieces apart costs at least what escaping them joined does.
      size += jsonLength(next) - 2;
      set(node, key, current + next);
    } else {
      size += jsonLength(next) - jsonLength(current);
      set(node, key, next);
    }
    return checkSize();
  }

  function add(
    node: Record<string, unknown> | unknown[],
    key: string | number,
    child: unknown,
    cost: number,
  ): void {
    // A comma is counted even before the first member: counting members would cost more than it saves.
    size += cost + 1 + (typeof key === 'string' ? jsonLength(key) + 1 : 0);
    set(node, key, child);
  }

  function checkSize(): PartialArgsStep {
    if (size <= limits.maxArgumentChars) return OK;
    const text = JSON.stringify(value);
    size = text.length;
    return size <= limits.maxArgumentChars ? OK : { kind: 'too_large', text };
  }

  return { value, apply };
}

function unreadable(message: string): PartialArgsStep {
  return { kind: 'unreadable', message: `${message}; nothing was run` };
}

/** The entry's value; `ABSENT` when it carries none, `undefined` when it carries one of the wrong type. */
function scalarOf(entry: Record<string, unknown>): unknown {
  if ('stringValue' in entry)
    return typeof entry['stringValue'] === 'string' ? entry['stringValue'] : undefined;
  if ('numberValue' in entry) {
    const number = entry['numberValue'];
    return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
  }
  if ('boolValue' in entry) return typeof entry['boolValue'] === 'boolean' ? entry['boolValue'] : undefined;
  if ('nullValue' in entry) return null;
  return ABSENT;
}

function childOf(node: Record<string, unknown> | unknown[], key: string | number): unknown {
  if (Array.isArray(node)) return typeof key === 'number' && key < node.length ? node[key] : ABSENT;
  return Object.hasOwn(node, key) ? node[key] : ABSENT;
}

/** Sets a key the way `JSON.parse` does: `__proto__` becomes an own property (which the gate refuses), never the prototype. */
function set(node: Record<string, unknown> | unknown[], key: string | number, child: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(node, key, { value: child, enumerable: true, writable: true, configurable: true });
  else (node as Record<string | number, unknown>)[key] = child;
}

function jsonLength(value: unknown): number {
  return JSON.stringify(value).length;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The path for a message: quoted, and cut short when a model sent a very long one. */
function show(path: string): string {
  return JSON.stringify(path.length > 80 ? `${path.slice(0, 80)}…` : path);
}

const NAME = /\.([^.[\]'"]+)|\[(0|[1-9]\d*)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]/y;

/** The steps of an RFC 9535 path of names and indices, or `undefined` when it is not one. */
function parsePath(path: string): Step[] | undefined {
  if (!path.startsWith('$')) return undefined;
  const steps: Step[] = [];
  NAME.lastIndex = 1;
  while (NAME.lastIndex < path.length) {
    const match = NAME.exec(path);
    if (match === null) return undefined;
    const [, dotted, index, single, double] = match;
    let key: string | number | undefined;
    if (dotted !== undefined) key = dotted;
    else if (index !== undefined) key = index.length > 15 ? Number.MAX_SAFE_INTEGER : Number(index);
    else key = unquote(single ?? double ?? '', single !== undefined);
    if (key === undefined) return undefined;
    steps.push({ key, end: NAME.lastIndex });
  }
  return steps;
}

/** A quoted name's text, its escapes read as JSON reads them (and `\'` inside single quotes). */
function unquote(text: string, single: boolean): string | undefined {
  if (!text.includes('\\') && !text.includes('"')) return text;
  let json = text;
  if (single) {
    json = '';
    for (let i = 0; i < text.length; i++) {
      const c = text[i] as string;
      if (c === '\\') {
        const next = text[++i] ?? '';
        json += next === "'" ? "'" : c + next;
      } else json += c === '"' ? '\\"' : c;
    }
  }
  try {
    return JSON.parse(`"${json}"`) as string;
  } catch {
    return undefined;
  }
}
