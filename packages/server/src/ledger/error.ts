/**
 * What went wrong with the ledger, for a program to switch on.
 *
 * @example
 * const code: LedgerErrorCode = 'ledger_unavailable';
 */
export type LedgerErrorCode = 'ledger_unavailable';

/**
 * The database under the ledger could not be used: it is down, refused the connection, is locked
 * by another connection for too long, is read-only, or the ledger was closed. Nothing in the
 * transaction that failed was saved, unless the connection broke while committing; a move is
 * keyed by its call id, so trying again with the same id is safe either way.
 *
 * @example
 * try {
 *   await ledger.transaction(async (trx) => move(trx));
 * } catch (error) {
 *   if (error instanceof LedgerError && error.code === 'ledger_unavailable') return retryLater();
 *   throw error;
 * }
 */
export class LedgerError extends Error {
  override readonly name = 'LedgerError';
  readonly code: LedgerErrorCode;

  constructor(code: LedgerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * How a driver's error is read: `retry` when running the transaction again can succeed (a lock
 * or serialization conflict), `unavailable` when the database cannot be used; `what` says which,
 * in words. Errors that are neither (a constraint, a syntax error) are the caller's bug and are
 * passed on unchanged.
 *
 * @example
 * const failure: Failure = { kind: 'unavailable', what: 'PostgreSQL refused the connection' };
 */
export interface Failure {
  readonly kind: 'retry' | 'unavailable';
  readonly what: string;
}

/**
 * The `LedgerError` for a failed operation: what happened, the driver's own words, and that the
 * caller may try again with the same call id.
 *
 * @example
 * throw unavailable({ kind: 'unavailable', what: 'the SQLite file is read-only' }, error, 'writing');
 */
export function unavailable(
  failure: Failure,
  cause: unknown,
  when: 'opening' | 'reading' | 'writing',
): LedgerError {
  const detail = cause instanceof Error && cause.message !== '' ? ` (${cause.message})` : '';
  const next = {
    opening: 'The ledger could not be opened.',
    reading: 'Nothing was read; try again.',
    writing:
      'Nothing was saved, unless the connection broke while committing; try again with the same call id, which is applied at most once.',
  }[when];
  return new LedgerError(
    'ledger_unavailable',
    `The ledger is unavailable: ${failure.what}${detail}. ${next}`,
    { cause },
  );
}

/**
 * The error for using a ledger after `close()`.
 *
 * @example
 * if (closed) throw closedLedger();
 */
export function closedLedger(): LedgerError {
  return new LedgerError(
    'ledger_unavailable',
    'The ledger is unavailable: it was closed. Open a new one to go on (or stop using this one before closing it).',
  );
}
