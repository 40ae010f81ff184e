import { snapshot } from '../snapshot.ts';

/**
 * The validated inputs of calls, as the record keeps them and as their tools get them. The record
 * keeps one deeply frozen value, and the tool runs with that same value: what a person approves
 * and the tool runs is what was validated, whatever app code does meanwhile, and no tool can
 * change what the record says. A tool that wants to change its input copies it first
 * (`structuredClone(input)`); a change to the frozen value throws in strict mode.
 *
 * @example
 * const inputs = createToolInputs();
 * const input = inputs.keep(parsed, true); // `parsed`, which the limits walk froze
 * tool.execute(inputs.take(input), context); // `input` itself
 */
export interface ToolInputs {
  /**
   * The value the record keeps, frozen. A value the gate made (arguments it parsed or copied, which
   * the limits walk froze as it read them, and which no one else holds) is kept as it is (`owned`);
   * a validator's own answer is copied and frozen. Throws when the value cannot be read (a getter
   * that throws).
   */
  readonly keep: (value: unknown, owned: boolean) => unknown;
  /**
   * The input a tool runs with: the record's own value when the gate made it; otherwise (a
   * validator's answer, a record read back from a ledger) a frozen copy, whose `Date`s hold the
   * time they held when validated.
   */
  readonly take: (input: unknown) => unknown;
}

/**
 * Creates an empty set of inputs.
 *
 * @example
 * const inputs = createToolInputs();
 */
export function createToolInputs(): ToolInputs {
  // The inputs that are plain data the gate made and froze: handed to their tools as they are.
  const plain = new WeakSet<object>();
  return {
    keep(value, owned) {
      if (!owned) return snapshot(value);
      if (typeof value === 'object' && value !== null) plain.add(value);
      return value;
    },
    take(input) {
      if (typeof input !== 'object' || input === null || plain.has(input)) return input;
      return snapshot(input);
    },
  };
}

// How engines word a write to a frozen object: V8 ("Cannot assign to read only property", "object
// is not extensible", "Cannot delete property"), SpiderMonkey ("is read-only", "can't be deleted",
// "not extensible"), JavaScriptCore ("readonly property", "not extensible", "Unable to delete").
const FROZEN_WRITE = /read[- ]?only|not extensible|non-configurable|delete property|can't be deleted/i;

/**
 * What the reason of a tool's throw adds when the error is a write to a frozen object, which a
 * tool that changes its input throws: how to change it instead. Empty for any other error.
 *
 * @example
 * frozenInputHint(new TypeError("Cannot assign to read only property 'qty' of object '#<Object>'"));
 * // "; a tool's input is frozen (it is what the record keeps): to change it, copy it first, e.g. structuredClone(input)"
 */
export function frozenInputHint(error: unknown): string {
  const frozenWrite =
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'TypeError' &&
    FROZEN_WRITE.test(String((error as { message?: unknown }).message));
  return frozenWrite
    ? "; a tool's input is frozen (it is what the record keeps): to change it, copy it first, e.g. structuredClone(input)"
    : '';
}
