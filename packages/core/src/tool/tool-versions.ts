/**
 * The tool sets a gate has had: the one in force, and for each call still open when it was
 * replaced, the one that call was proposed under, so that it is checked, approved, run and
 * committed with one definition. A call proposed under the set in force holds nothing here.
 *
 * @example
 * const versions = createToolVersions(firstSet);
 * versions.replace(nextSet, ['call_1']);
 * versions.of('call_1'); // firstSet
 * versions.of('call_2'); // nextSet
 */
export interface ToolVersions<T> {
  readonly current: () => T;
  /** The set call `id` was proposed under: the one in force, unless it was replaced since. */
  readonly of: (id: string) => T;
  /** `next` is in force from now on; each of `open` (calls not ended) keeps the set it had. */
  readonly replace: (next: T, open: Iterable<string>) => void;
  /** Call `id` has ended: it needs its set no more. */
  readonly release: (id: string) => void;
}

/**
 * Creates the versions of a gate's tools, starting with `first`.
 *
 * @example
 * const versions = createToolVersions({ tools, registry });
 */
export function createToolVersions<T>(first: T): ToolVersions<T> {
  let current = first;
  const pinned = new Map<string, T>();
  return {
    current: () => current,
    of: (id) => (pinned.size === 0 ? current : (pinned.get(id) ?? current)),
    replace(next, open) {
      for (const id of open) if (!pinned.has(id)) pinned.set(id, current);
      current = next;
    },
    release(id) {
      if (pinned.size !== 0) pinned.delete(id);
    },
  };
}
