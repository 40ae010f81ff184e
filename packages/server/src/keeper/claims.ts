import type { Clock, ToolCallRecord } from '@toolgate/core';
import type { Ledger } from '../ledger/ledger.ts';
import type { CallsTable } from '../ledger/schema.ts';
import type { ToolSpan } from './telemetry.ts';

/** What this process holds on a call it runs: the fencing token of its claim, and the run's key. */
export interface Claim {
  readonly fence: number;
  readonly idempotencyKey: string;
  /** Whose call it is, so that a cancel can be checked without the database (which a transactional run may hold). */
  readonly session: string;
  readonly owner: string;
  renewal?: unknown;
  span?: ToolSpan;
}

/**
 * The calls this process runs: each one's claim, the row as this process last wrote it (so the
 * next move needs no read), and the timer that renews its lease every third of it.
 *
 * @example
 * const claims = createClaims({ ledger, clock, leaseMs: 30_000, onError, onLeaseLost });
 * claims.claimed('call_1', { fence: 1, idempotencyKey, session, owner });
 * claims.renew('call_1');
 */
export interface Claims {
  readonly claims: ReadonlyMap<string, Claim>;
  readonly known: Map<string, CallsTable>;
  readonly claimed: (id: string, claim: Claim) => void;
  /** Keeps the lease of a claimed call while its tool runs. */
  readonly renew: (id: string) => void;
  /** Lets go of a call: its renewal stops and its span ends (with the record it settled as, if any). */
  readonly release: (id: string, settled?: ToolCallRecord) => void;
  /** Lets go of every call, for good. */
  readonly close: () => void;
}

/**
 * What {@link createClaims} needs.
 *
 * @example
 * const options: ClaimsOptions = { ledger, clock, leaseMs: 30_000, onError: console.error, onLeaseLost: stop };
 */
export interface ClaimsOptions {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly leaseMs: number;
  readonly onError: (error: unknown) => void;
  /** The lease could not be renewed (cancelled elsewhere, or taken over): the call was let go. */
  readonly onLeaseLost: (id: string) => void;
}

/**
 * Builds the claims of one keeper.
 *
 * @example
 * const claims = createClaims(options);
 */
export function createClaims({ ledger, clock, leaseMs, onError, onLeaseLost }: ClaimsOptions): Claims {
  const claims = new Map<string, Claim>();
  const known = new Map<string, CallsTable>();
  let closed = false;

  function release(id: string, settled?: ToolCallRecord): void {
    known.delete(id);
    const claim = claims.get(id);
    if (claim === undefined) return;
    claims.delete(id);
    if (claim.renewal !== undefined) clock.clearTimeout(claim.renewal);
    claim.span?.end(settled);
  }

  const extend = (id: string, claim: Claim) =>
    ledger.transaction((trx) =>
      trx
        .updateTable('toolgate_calls')
        .set({ lease_expires_at: clock.now() + leaseMs })
        .where('id', '=', id)
        .where('fence', '=', claim.fence)
        .where('status', '=', 'executing')
        .where('lease_owner', 'is not', null)
        .executeTakeFirst(),
    );

  function schedule(id: string, claim: Claim): void {
    claim.renewal = clock.setTimeout(
      () => {
        if (closed || claims.get(id) !== claim) return;
        extend(id, claim).then(
          (result) => {
            if (claims.get(id) !== claim) return;
            if (Number(result.numUpdatedRows) === 0) {
              // Cancelled elsewhere, or taken over after this process stalled past its lease.
              release(id);
              onLeaseLost(id);
            } else schedule(id, claim);
          },
          (error: unknown) => {
            // The database is out of reach: keep trying while the lease may still hold.
            onError(error);
            if (claims.get(id) === claim) schedule(id, claim);
          },
        );
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
  }

  return {
    claims,
    known,
    claimed(id, claim) {
      // A call run again under a new token: the old claim's renewal stops, and its span goes on.
      const before = claims.get(id);
      if (before !== undefined && before !== claim) {
        if (before.renewal !== undefined) clock.clearTimeout(before.renewal);
        if (claim.span === undefined && before.span !== undefined) claim.span = before.span;
      }
      claims.set(id, claim);
    },
    renew(id) {
      const claim = claims.get(id);
      if (claim !== undefined) schedule(id, claim);
    },
    release,
    close() {
      closed = true;
      for (const id of [...claims.keys()]) release(id);
    },
  };
}
