import { textOf } from '../record/text.ts';
import type { Reconciliation, ToolDefinition } from './tool.ts';

export type { ReconcileContext, Reconciliation } from './tool.ts';

/** How long a reconcile may take when its tool sets no `timeoutMs`. */
export const RECONCILE_TIMEOUT_MS = 30_000;

/**
 * A reconcile's answer, trusted only when it is exactly one of the three shapes; anything else
 * (a typo in `outcome`, `committed` without an `output`, a thrown getter) reads as `unknown`,
 * with the words that say what it answered.
 *
 * @example
 * readReconciliation({ outcome: 'comitted' }); // { outcome: 'unknown', problem: 'reconcile answered an unknown outcome "comitted"' }
 */
export function readReconciliation(
  answer: unknown,
): Reconciliation | { readonly outcome: 'unknown'; readonly problem: string } {
  try {
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
      return { outcome: 'unknown', problem: `reconcile answered ${shown(answer)}, not { outcome }` };
    const outcome: unknown = Object.hasOwn(answer, 'outcome')
      ? (answer as { outcome: unknown }).outcome
      : undefined;
    if (outcome === 'not_executed') return { outcome };
    if (outcome === 'unknown') return { outcome, problem: 'reconcile could not tell (unknown)' };
    if (outcome === 'committed') {
      if (!Object.hasOwn(answer, 'output'))
        return { outcome: 'unknown', problem: 'reconcile answered committed without the output it found' };
      return { outcome, output: (answer as { output: unknown }).output };
    }
    return { outcome: 'unknown', problem: `reconcile answered an unknown outcome ${shown(outcome)}` };
  } catch (error) {
    return { outcome: 'unknown', problem: `reconcile's answer could not be read: ${textOf(error)}` };
  }
}

function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : textOf(value);
}

/**
 * The key a call's effect goes by downstream: the tool's `idempotencyKey(input, call)`, or the
 * call id. Throws a TypeError that names the tool when the tool's function throws or answers
 * anything but a non-empty string (the gate rejects such a call before anything runs).
 *
 * @example
 * idempotencyKeyOf(charge, { order_id: 'o_1' }, { id: 'call_9', name: 'charge' }); // 'charge:o_1'
 */
export function idempotencyKeyOf(
  tool: ToolDefinition,
  input: unknown,
  call: { readonly id: string; readonly name: string },
): string {
  if (tool.idempotencyKey === undefined) return call.id;
  let key: unknown;
  try {
    key = tool.idempotencyKey(input, { id: call.id, name: call.name });
  } catch (error) {
    throw new TypeError(`the idempotencyKey of "${tool.name}" threw: ${textOf(error)}`, { cause: error });
  }
  if (typeof key !== 'string' || key === '')
    throw new TypeError(
      `the idempotencyKey of "${tool.name}" answered ${shown(key)}; it must answer a non-empty string`,
    );
  return key;
}

/**
 * Whether a tool's outcome can be in doubt: it has `reconcile` or says what to do when nobody can
 * tell (`onUnknown`). Only such tools have a throw or a crash mean "unknown"; for the others a
 * throw is `failed` / `tool_error`, as it always was.
 *
 * @example
 * if (doubtful(entry.tool)) askReconcile();
 */
export function doubtful(tool: ToolDefinition): boolean {
  return tool.reconcile !== undefined || tool.onUnknown !== undefined;
}
