import { hash } from 'node:crypto';
import { canonicalJson } from '@toolgate/core/kit';
import { type Reason, type ToolCallRecord } from '@toolgate/core';
import type { EventReason, NewLedgerEvent } from '../ledger/ledger.ts';
import { storeRecord } from '../ledger/stored-record.ts';

/**
 * SHA-256 hex of the canonical JSON of a validated input: the same value as core's async
 * `inputHash`, computed here synchronously inside the move that stores the input.
 *
 * @example
 * hashInput({ amount_cents: 2000 }); // 'b3…'
 */
export function hashInput(input: unknown): string {
  return hash('sha256', canonicalJson(input));
}

/**
 * Who would hold a claim written now: this process, until `expiresAt`.
 *
 * @example
 * const lease: Lease = { instance: 'app-1', expiresAt: clock.now() + leaseMs };
 */
export interface Lease {
  readonly instance: string;
  readonly expiresAt: number;
}

/**
 * The columns that follow from a record's status: the stored record and input, the output and
 * reason, and on `executing` a claim (this process's lease and the next fencing token).
 *
 * @example
 * const columns = rowColumns(next, row, { instance: 'app-1', expiresAt: now + 30_000 });
 */
export function rowColumns(
  next: ToolCallRecord,
  row: { readonly fence: number; readonly input_hash: string | null },
  lease: Lease,
) {
  const input = next.status === 'pending' || next.input === undefined ? null : canonicalJson(next.input);
  // A call held in doubt runs nowhere: it has no lease for a recovery to find run out, and no claim.
  const executing = next.status === 'executing' && next.doubt === undefined;
  return {
    status: next.status,
    record: storeRecord(next),
    updated_at: next.updatedAt,
    input,
    input_hash: input === null ? row.input_hash : hash('sha256', input),
    output: next.status === 'committed' && next.output !== undefined ? JSON.stringify(next.output) : null,
    reason: next.reason === undefined ? null : JSON.stringify(next.reason),
    lease_owner: executing ? lease.instance : null,
    lease_expires_at: executing ? lease.expiresAt : null,
    fence: executing ? row.fence + 1 : row.fence,
  };
}

const reasonOf = (record: ToolCallRecord): Reason | undefined =>
  record.history[record.history.length - 1]?.reason;

/**
 * Why a running call stays running, for the audit trail: held in doubt for a person, or run again
 * after the downstream (or a person) said its effect never happened.
 */
function againReason(from: ToolCallRecord, to: ToolCallRecord): EventReason | undefined {
  if (to.doubt !== undefined)
    return { code: 'held', message: `outcome unknown, held for a person to check: ${to.doubt.message}` };
  if ((to.attempt ?? 1) > (from.attempt ?? 1))
    return {
      code: 'run_again',
      message: `its effect never happened; running it again (run ${to.attempt ?? 1}) with the same idempotency key`,
    };
  return undefined;
}

/**
 * The audit event of a move from `from` to `to` (a first write has no `from`, and no reason).
 *
 * @example
 * await ledger.appendEvent(trx, moveEvent('chat_1', current, next, 'user_42'));
 */
export function moveEvent(
  session: string,
  from: ToolCallRecord | undefined,
  to: ToolCallRecord,
  actor: string,
): NewLedgerEvent {
  const reason =
    from === undefined
      ? undefined
      : from.status === 'executing' && to.status === 'executing'
        ? againReason(from, to)
        : reasonOf(to);
  return {
    callId: to.id,
    session,
    from: from?.status ?? null,
    to: to.status,
    actor,
    at: to.updatedAt,
    ...(reason === undefined ? {} : { reason }),
    record: storeRecord(to),
  };
}
