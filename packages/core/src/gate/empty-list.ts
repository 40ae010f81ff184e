/**
 * An empty array that already holds the kind of element it will hold (`sample`'s: a string, a
 * number that is not whole, an object). An empty `[]` starts as an array of small integers, and
 * optimised code that pushes to arrays of one kind is thrown away when the first push to a new
 * array changes its kind: a gate makes its own lists, so each new gate cost such a throw-away.
 *
 * @example
 * const ids = emptyListOf(''); // string[], ready for strings
 */
export function emptyListOf<T>(sample: T): T[] {
  const list = [sample];
  list.length = 0;
  return list;
}
