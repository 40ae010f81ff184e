import { setTimeout as delay } from 'node:timers/promises';
import { LedgerError } from '../../src/index.ts';

/**
 * Runs `work` again while it fails with the ledger's own error (the contract for a LedgerError is
 * "try again"), up to `tries` times, `pauseMs × attempt` apart; any other error is thrown at once.
 */
export async function againWhileUnavailable<T>(
  work: () => Promise<T>,
  { tries, pauseMs = 0 }: { readonly tries: number; readonly pauseMs?: number },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof LedgerError) || attempt >= tries) throw error;
      if (pauseMs > 0) await delay(pauseMs * attempt);
    }
  }
}
