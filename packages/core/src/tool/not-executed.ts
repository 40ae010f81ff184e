import { textOf } from '../record/text.ts';

const NOT_EXECUTED = Symbol.for('toolgate.notExecuted');

/**
 * An error a tool throws when it knows its effect did not happen (the API refused the request, the
 * card was declined, nothing was sent). See {@link notExecuted}.
 *
 * @example
 * if (error instanceof NotExecutedError) console.log('nothing was charged:', error.message);
 */
export class NotExecutedError extends Error {
  override readonly name = 'NotExecutedError';
  readonly [NOT_EXECUTED] = true;

  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}

/**
 * Marks what a tool throws as "the effect did not happen": the call ends `failed` / `tool_error`
 * at once, and `reconcile` is not asked. Anything else a tool with `reconcile` (or `onUnknown`)
 * throws leaves its outcome in doubt (a timeout, a dropped connection, a 500 after the request
 * left), and the gate asks `reconcile` what happened. Pass the error you caught, or a sentence.
 *
 * @example
 * execute: async (input, ctx) => {
 *   const response = await fetch(url, { method: 'POST', headers: { 'Idempotency-Key': ctx.idempotencyKey }, body, signal: ctx.signal });
 *   // A 4xx is the provider refusing the request: nothing was charged.
 *   if (response.status >= 400 && response.status < 500) throw notExecuted(`the provider refused the charge (${response.status})`);
 *   if (!response.ok) throw new Error(`the provider answered ${response.status}`); // in doubt: reconcile is asked
 *   return response.json();
 * }
 */
export function notExecuted(reason: unknown = 'the tool did not carry out its effect'): NotExecutedError {
  if (isNotExecuted(reason)) return reason;
  return new NotExecutedError(textOf(reason), reason instanceof Error ? { cause: reason } : undefined);
}

/**
 * Whether a thrown value was marked with {@link notExecuted} (or is a {@link NotExecutedError} from
 * another copy of this package).
 *
 * @example
 * isNotExecuted(notExecuted('declined')); // true
 * isNotExecuted(new Error('socket hang up')); // false
 */
export function isNotExecuted(error: unknown): error is NotExecutedError {
  try {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as { [NOT_EXECUTED]?: unknown })[NOT_EXECUTED] === true
    );
  } catch {
    // A revoked Proxy thrown by a tool: not a mark anyone made.
    return false;
  }
}
