import type { Clock, ToolCallRecord } from '@toolgate/core';
import { LedgerError } from '../ledger/error.ts';
import type { Claims } from './claims.ts';

/**
 * How the end of a run this process holds is written when the ledger cannot take it at once.
 *
 * @example
 * const endings = createEndingRetry({ claims, clock, boundMs: 30_000, onError });
 * const record = await endings.write('call_1', () => storedMove('call_1', { type: 'commit', output }, note));
 */
export interface EndingRetry {
  /**
   * Runs `attempt` (the move that ends the run); while it fails because the ledger is unavailable
   * and the claim is still this process's, runs it again with a growing pause, for at most the
   * bound. Each attempt carries the claim's fencing token, so an attempt after another process
   * took the call over is refused as stale, never applied. Once the bound has passed (or for an
   * error that is not the ledger's), the claim is let go: its lease is no longer renewed, runs
   * out, and recovery (here or on another instance) settles the call as its tool's kind says.
   */
  readonly write: (
    id: string,
    attempt: () => Promise<ToolCallRecord | undefined>,
  ) => Promise<ToolCallRecord | undefined>;
}

/**
 * What {@link createEndingRetry} needs.
 *
 * @example
 * const options: EndingRetryOptions = { claims, clock, boundMs: 30_000, onError: console.error };
 */
export interface EndingRetryOptions {
  readonly claims: Claims;
  readonly clock: Clock;
  /** How long an ending is tried again, in milliseconds, from its first failure. */
  readonly boundMs: number;
  readonly onError: (error: unknown) => void;
}

const FIRST_PAUSE_MS = 50;
const LONGEST_PAUSE_MS = 1000;

/**
 * Builds the ending retry of one keeper.
 *
 * @example
 * const endings = createEndingRetry(options);
 */
export function createEndingRetry({ claims, clock, boundMs, onError }: EndingRetryOptions): EndingRetry {
  const pause = (ms: number) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms));
  return {
    async write(id, attempt) {
      const claim = claims.claims.get(id);
      const deadline = clock.now() + boundMs;
      let wait = FIRST_PAUSE_MS;
      for (let tries = 1; ; tries += 1) {
        try {
          return await attempt();
        } catch (error) {
          // Lost meanwhile (taken over, cancelled, the gate closed): whoever holds the call now ends it.
          if (claim === undefined || claims.claims.get(id) !== claim) throw error;
          if (!(error instanceof LedgerError) || clock.now() + wait > deadline) {
            claims.release(id);
            throw error;
          }
          if (tries === 1) onError(error);
          await pause(wait);
          wait = Math.min(wait * 2, LONGEST_PAUSE_MS);
          if (claims.claims.get(id) !== claim) throw error;
        }
      }
    },
  };
}
