import { hash } from 'node:crypto';
import { canonicalJson, type Reason, type ToolCallRecord } from '@toolgate/core';
import type { NewLedgerEvent } from '../ledger/ledger.ts';
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
  const executing = next.status === 'executing';
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
  const reason = from === undefined ? undefined : reasonOf(to);
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
