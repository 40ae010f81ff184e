import { freezeOwnAndCopy, ownCopy, snapshot } from '../snapshot.ts';

/**
 * The validated inputs of calls, as the record keeps them and as their tools get them. The record
 * keeps one frozen value: what a person approves and the tool runs is what was validated, whatever
 * app code does to the record meanwhile. The tool gets a copy of its own, kept aside until it runs,
 * so that it cannot change the record's.
 *
 * @example
 * const inputs = createToolInputs();
 * const input = inputs.keep(parsed, true); // `parsed`, frozen in place
 * tool.execute(inputs.take(input), context); // an unfrozen copy
 */
export interface ToolInputs {
  /**
   * The value the record keeps, frozen. A value the gate made (arguments it parsed or copied, which
   * no one else holds) is frozen in place (`owned`); a validator's own answer is copied first.
   * Throws when the value cannot be read (a getter that throws).
   */
  readonly keep: (value: unknown, owned: boolean) => unknown;
  /** The input a tool runs with: the copy kept for it (once), or a new copy of the record's. */
  readonly take: (input: unknown) => unknown;
}

/**
 * Creates an empty set of inputs; the copies it keeps go when their records do.
 *
 * @example
 * const inputs = createToolInputs();
 */
export function createToolInputs(): ToolInputs {
  // By the record's frozen value, so a record dropped unrun drops the tool's copy with it.
  const forTool = new WeakMap<object, unknown>();
  return {
    keep(value, owned) {
      // A value the gate made is frozen for the record as its copy for the tool is made, in one
      // walk; a validator's own answer is copied for the tool first, then for the record.
      const mine = owned ? freezeOwnAndCopy(value) : ownCopy(value);
      const input = owned ? value : snapshot(value);
      if (typeof input === 'object' && input !== null) forTool.set(input, mine);
      return input;
    },
    take(input) {
      if (typeof input !== 'object' || input === null) return input;
      const kept = forTool.get(input);
      if (kept === undefined) return ownCopy(input);
      forTool.delete(input);
      return kept;
    },
  };
}
