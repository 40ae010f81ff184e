/** One array or object that has opened and not yet closed. */
interface Frame {
  readonly array: boolean;
  readonly value: Record<string, unknown> | unknown[];
  /** For objects: the key whose value is being read, once its colon has been seen. */
  key: string | undefined;
  /** How many values it holds, so that `{}` and `[]` close but `{"a":1,}` and `[1,]` do not. */
  size: number;
}

/**
 * The arrays and objects of a JSON value that are still open, innermost last, each holding the
 * values finished inside it.
 *
 * @example
 * const open = createJsonContainers(64);
 * open.open(false);
 * open.setKey('q');
 * open.add('ra');
 * open.close(false, undefined); // { q: 'ra' }
 */
export interface JsonContainers {
  /** The innermost open container (`undefined`: none is open). */
  readonly innermost: () => { readonly array: boolean; readonly size: number } | undefined;
  /** Opens an array or an object inside the innermost one; `false` when that would pass the depth limit. */
  readonly open: (array: boolean) => boolean;
  /** The innermost object's key whose value comes next. */
  readonly setKey: (key: string) => void;
  /** Puts a finished value into the innermost container; `false` when none is open (the value is the root). */
  readonly add: (value: unknown) => boolean;
  /** Closes the innermost container if it is of this kind, and answers it; `none` when it is not. */
  readonly close: (array: boolean, none: unknown) => unknown;
  /**
   * Copies of the open containers with `child` (the innermost value so far, or `none`) in place.
   * Only the open containers are copied: everything finished inside them is shared.
   */
  readonly snapshot: (child: unknown, none: unknown) => unknown;
}

/**
 * Creates an empty stack of open containers.
 *
 * @example
 * const open = createJsonContainers(maxDepth);
 */
export function createJsonContainers(maxDepth: number): JsonContainers {
  const stack: Frame[] = [];
  const top = (): Frame | undefined => stack[stack.length - 1];
  return {
    innermost: top,
    open(array) {
      if (stack.length >= maxDepth) return false;
      stack.push({ array, value: array ? [] : {}, key: undefined, size: 0 });
      return true;
    },
    setKey(key) {
      (top() as Frame).key = key;
    },
    add(value) {
      const frame = top();
      if (frame === undefined) return false;
      if (frame.array) (frame.value as unknown[]).push(value);
      else setKey(frame.value as Record<string, unknown>, frame.key as string, value);
      frame.key = undefined;
      frame.size++;
      return true;
    },
    close(array, none) {
      const frame = top();
      if (frame === undefined || frame.array !== array) return none;
      stack.pop();
      return frame.value;
    },
    snapshot(child, none) {
      let inner = child;
      for (let level = stack.length - 1; level >= 0; level--) {
        const frame = stack[level] as Frame;
        if (frame.array) {
          const copy = (frame.value as unknown[]).slice();
          if (inner !== none) copy.push(inner);
          inner = copy;
        } else {
          const copy = { ...(frame.value as Record<string, unknown>) };
          if (inner !== none && frame.key !== undefined) setKey(copy, frame.key, inner);
          inner = copy;
        }
      }
      return inner;
    },
  };
}

/** Sets a key the way `JSON.parse` does: `__proto__` becomes an own property, never the prototype. */
function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
