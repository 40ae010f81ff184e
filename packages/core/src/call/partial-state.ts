import { messageOf } from '../record/text.ts';

/**
 * What is wrong with what a tool's `commit` returned, or `undefined` when it is a partial next
 * state the store may take: an object literal (or one without a prototype) that is not a
 * thenable. A thenable is refused rather than awaited: the write must happen in the same instant
 * the call becomes `committed`, and an object with a `then` would be an async commit in disguise
 * whose other keys would reach the store before it settled.
 *
 * @example
 * partialStateProblem({ cart: [] }); // undefined
 * partialStateProblem(Promise.resolve({})); // 'commit must return the partial next state as a plain object, not a Promise'
 */
export function partialStateProblem(partial: unknown): string | undefined {
  try {
    if (!isPlainObject(partial))
      return `commit must return the partial next state as a plain object, not ${kindOf(partial)}`;
    if (typeof (partial as { then?: unknown }).then === 'function') {
      return 'commit must return the partial next state as a plain object, not a thenable (a `then` method): commit runs synchronously';
    }
    return undefined;
  } catch (error) {
    return `commit must return the partial next state as a plain object; what it returned cannot be read: ${messageOf(error)}`;
  }
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return `a ${typeof value}`;
  try {
    if (Array.isArray(value)) return 'an array';
    const name: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object with a prototype';
  } catch {
    return 'an object that cannot be read';
  }
}
