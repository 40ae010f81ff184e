/**
 * A deep, frozen copy of what a record holds (a call's validated input, its committed output), so
 * that no listener, app code or tool can change what a record says or what an approved call runs.
 *
 * Plain data (objects, arrays, and the strings, numbers and booleans in them) is copied and frozen;
 * a `Date` is copied, and the time it held is kept aside, so that the copy a tool runs with has
 * that time even if someone changed the record's `Date` since. Anything else (a `Map`, a class
 * instance, a function a Standard Schema transform made) is kept as it is: freezing cannot protect
 * what such an object holds inside, and copying it would change what it is.
 *
 * @example
 * const input = snapshot(validated); // Object.isFrozen(input) === true
 */
export function snapshot<T>(value: T): T {
  return typeof value === 'object' && value !== null ? (copyOf(value, true) as T) : value;
}

/**
 * Most values are trees of plain data (parsed JSON): they are copied by a plain recursive walk,
 * bounded at a depth no stack minds. A value that nests deeper, or holds more objects than the
 * walk's budget, may be a cycle or a value shared many times over (`a = { x: b, y: b }`, again and
 * again); it is copied again by a walk that remembers each object it copied, which keeps cycles and
 * shared values as they are and costs each object once. (The plain walk copies a value shared in
 * two places twice.)
 */
function copyOf(value: object, freeze: boolean): unknown {
  const walk: Walk = { freeze, objects: TREE_OBJECTS };
  const tree = copy(value, walk, 0);
  if (tree !== TOO_BIG) return tree;
  return copyGraph(value, freeze);
}

/**
 * The second walk: iterative (a value deeper than the plain walk goes may be deeper than the
 * stack), and remembering each object it copied, so cycles and shared values stay as they are.
 * Copies are frozen only once all of them are filled in.
 */
function copyGraph(value: object, freeze: boolean): unknown {
  const seen = new Map<object, unknown>();
  const unfilled: (Record<string, unknown> | unknown[])[] = [];
  const made: object[] = [];
  const shallow = (node: object): unknown => {
    const done = seen.get(node);
    if (done !== undefined) return done;
    let out: Record<string, unknown> | unknown[];
    if (Array.isArray(node)) out = node.slice() as unknown[];
    else {
      const proto: unknown = Object.getPrototypeOf(node);
      if (proto === Object.prototype) out = { ...node };
      else if (proto === null) out = Object.assign(Object.create(null) as Record<string, unknown>, node);
      else return other(node, freeze, seen);
    }
    seen.set(node, out);
    unfilled.push(out);
    made.push(out);
    return out;
  };
  const root = shallow(value);
  for (let out = unfilled.pop(); out !== undefined; out = unfilled.pop()) {
    if (Array.isArray(out)) {
      for (let i = 0; i < out.length; i++) {
        const item: unknown = out[i];
        if (typeof item === 'object' && item !== null) out[i] = shallow(item);
      }
      continue;
    }
    for (const key in out) {
      const item: unknown = out[key];
      if (typeof item !== 'object' || item === null || !Object.hasOwn(out, key)) continue;
      const copied = shallow(item);
      // Assigning `__proto__` would set the copy's prototype instead of the key's value.
      if (key === '__proto__')
        Object.defineProperty(out, key, {
          value: copied,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[key] = copied;
    }
  }
  if (freeze) for (const out of made) Object.freeze(out);
  return root;
}

interface Walk {
  readonly freeze: boolean;
  objects: number;
}

const TREE_DEPTH = 256;
const TREE_OBJECTS = 100_000;
const TOO_BIG: unique symbol = Symbol('too big for a plain walk');

// The time each snapshot's Date held when it was made: `setTime` on a frozen Date still works.
const times = new WeakMap<Date, number>();

function copy(node: object, walk: Walk, depth: number): unknown {
  if (depth > TREE_DEPTH || --walk.objects < 0) return TOO_BIG;
  if (Array.isArray(node)) {
    // A slice keeps the kind of elements V8 gave the original.
    const out = node.slice() as unknown[];
    for (let i = 0; i < out.length; i++) {
      const item: unknown = out[i];
      if (typeof item !== 'object' || item === null) continue;
      const copied = copy(item, walk, depth + 1);
      if (copied === TOO_BIG) return TOO_BIG;
      out[i] = copied;
    }
    return walk.freeze ? Object.freeze(out) : out;
  }
  const proto: unknown = Object.getPrototypeOf(node);
  if (proto !== Object.prototype && proto !== null) return other(node, walk.freeze, undefined);
  // Built key by key, not spread: V8 freezes a spread copy (`Object.freeze({ ...node })`) several
  // times slower than one built from `{}`, and every call's output is copied and frozen.
  const out = (proto === null ? Object.create(null) : {}) as Record<PropertyKey, unknown>;
  const source = node as Readonly<Record<PropertyKey, unknown>>;
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    let item = source[key];
    if (typeof item === 'object' && item !== null) {
      item = copy(item, walk, depth + 1);
      if (item === TOO_BIG) return TOO_BIG;
    }
    put(out, key, item);
  }
  // As a spread would, symbol keys too (their values as they are: they are not data a walk reads).
  for (const symbol of Object.getOwnPropertySymbols(source)) {
    if (Object.prototype.propertyIsEnumerable.call(source, symbol)) put(out, symbol, source[symbol]);
  }
  return walk.freeze ? Object.freeze(out) : out;
}

/**
 * Sets a key of a copy as a spread would: as its own data property. Assigning would call a setter
 * that `Object.prototype` has for the key (`__proto__`, or one a page added); defining cannot.
 */
function put(out: Record<PropertyKey, unknown>, key: PropertyKey, value: unknown): void {
  if (key in Object.prototype) {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  } else out[key] = value;
}

/** A Date is copied (its time kept aside when frozen); anything else that is not plain data is kept. */
function other(node: object, freeze: boolean, seen: Map<object, unknown> | undefined): unknown {
  if (!(node instanceof Date)) return node;
  const time = times.get(node) ?? node.getTime();
  const out = new Date(time);
  seen?.set(node, out);
  if (!freeze) return out;
  times.set(out, time);
  return Object.freeze(out);
}
