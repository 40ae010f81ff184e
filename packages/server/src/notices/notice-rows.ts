import type { ToolCallRecord } from '@toolgate/core';
import type { Kysely, Transaction } from 'kysely';
import type { Ledger } from '../ledger/ledger.ts';
import type { LedgerDatabase, NoticesTable } from '../ledger/schema.ts';
import { statement, type RowWrite } from '../ledger/statements.ts';
import { storeRecord } from '../ledger/stored-record.ts';
import { noticeId, RANK, type NoticeKind } from './notice.ts';

type Trx = Transaction<LedgerDatabase>;

/**
 * Notices of one kind about one call to some principals, as the move or timer that causes them
 * writes them.
 *
 * @example
 * const batch: NoticeBatch = { kind: 'asked', step: 0, record, session, owner, to: ['manager_1'] };
 */
export interface NoticeBatch {
  readonly kind: NoticeKind;
  /** The escalation step that asked them; 0 for any other notice. */
  readonly step: number;
  readonly record: ToolCallRecord;
  readonly session: string;
  readonly owner: string;
  readonly to: readonly string[];
  /** For an `asked` sent again after an approver's edit: the edited input's hash. */
  readonly editedHash?: string;
}

/**
 * A notice row this process claimed: the fencing token its outcome must still find on the row.
 *
 * @example
 * const claimed: ClaimedNotice = { ...row, fence: row.fence + 1 };
 */
export type ClaimedNotice = NoticesTable;

/**
 * The claim a notice is written with: the process that writes it delivers it once the
 * transaction commits, without a claim of its own; if it dies first, the claim runs out and any
 * process takes the notice then.
 *
 * @example
 * const claim: WriterClaim = { instance: 'app-1', leaseMs: 30_000 };
 */
export interface WriterClaim {
  readonly instance: string;
  readonly leaseMs: number;
}

/**
 * Writes a batch of notices, one row per principal and channel, due now, in the caller's
 * transaction, claimed by the writer when `claim` is given. A notice written already (the same id
 * and channel; the id names its call and principal, which lead the table's key) is kept as it is.
 *
 * @example
 * await writeNotices(trx, batch, ['webhook'], clock.now(), { instance: 'app-1', leaseMs: 30_000 });
 */
export async function writeNotices(
  trx: Trx,
  batch: NoticeBatch,
  channels: readonly string[],
  now: number,
  claim?: WriterClaim,
): Promise<readonly Pick<NoticesTable, 'id' | 'channel' | 'call_id'>[]> {
  const { record, kind } = batch;
  const from = record.approval?.from ?? { principal: batch.owner };
  const stored = storeRecord(record);
  const rows = [...new Set(batch.to)].flatMap((to) =>
    channels.map((channel) => ({
      id: noticeId(record.id, kind, batch.step, to, batch.editedHash),
      channel,
      call_id: record.id,
      session: batch.session,
      kind,
      principal: to,
      from_principal: from.principal,
      from_on_behalf_of: from.onBehalfOf ?? null,
      record: stored,
      created_at: now,
      rank: RANK[kind],
      due_at: now,
      attempts: 0,
      delivered_at: null,
      ref: null,
      lease_owner: claim?.instance ?? null,
      lease_expires_at: claim === undefined ? null : now + claim.leaseMs,
      fence: claim === undefined ? 0 : 1,
    })),
  );
  if (rows.length === 0) return [];
  await trx
    .insertInto('toolgate_notices')
    .values(rows)
    .onConflict((conflict) => conflict.columns(['call_id', 'principal', 'channel', 'id']).doNothing())
    .execute();
  return rows;
}

/**
 * Notices not delivered, due by `now`, that nobody's live claim holds but `instance`'s own (the
 * notices it wrote, claimed as they were written), oldest first.
 *
 * @example
 * const due = await dueNotices(ledger, Date.now(), 100, 'app-1');
 */
export async function dueNotices(
  ledger: Ledger,
  now: number,
  limit: number,
  instance: string,
): Promise<NoticesTable[]> {
  return ledger.read((db) =>
    db
      .selectFrom('toolgate_notices')
      .selectAll()
      .where('delivered_at', 'is', null)
      .where('due_at', '<=', now)
      .where((eb) =>
        eb.or([
          eb('lease_expires_at', 'is', null),
          eb('lease_expires_at', '<=', now),
          eb('lease_owner', '=', instance),
        ]),
      )
      .orderBy('created_at')
      .orderBy('rank')
      .limit(limit)
      .execute(),
  );
}

/**
 * When a notice not delivered may next be tried (its due time, or the end of the claim holding
 * it); `undefined` when every notice is delivered.
 *
 * @example
 * const at = await nextNoticeAt(ledger);
 */
export async function nextNoticeAt(ledger: Ledger): Promise<number | undefined> {
  const rows = await ledger.read((db) =>
    db
      .selectFrom('toolgate_notices')
      .select(['due_at', 'lease_expires_at'])
      .where('delivered_at', 'is', null)
      .orderBy('due_at')
      .limit(50)
      .execute(),
  );
  const times = rows.map((row) => Math.max(row.due_at, row.lease_expires_at ?? 0));
  return times.length === 0 ? undefined : Math.min(...times);
}

/**
 * Claims a notice for one delivery until `now + leaseMs`, unless it was delivered, someone else's
 * claim on it is live, or an earlier notice of the same call to the same principal through the
 * same channel is not delivered yet (it goes first: the end of a call updates what its ask showed).
 *
 * @example
 * const claimed = await claimNotice(ledger, row, { instance: 'app-1', now: Date.now(), leaseMs: 30_000 });
 */
export async function claimNotice(
  ledger: Ledger,
  row: NoticesTable,
  lease: {
    readonly instance: string;
    readonly now: number;
    readonly leaseMs: number;
    /** Whether this process holds an earlier notice as delivered, not recorded yet. */
    readonly delivered?: (row: Pick<NoticesTable, 'id' | 'channel'>) => boolean;
  },
): Promise<ClaimedNotice | undefined> {
  const fence = row.fence + 1;
  const mine = lease.instance === row.lease_owner && (row.lease_expires_at ?? 0) > lease.now;
  if (mine) {
    // Claimed as it was written, by this process: no claim to take, only the order to keep.
    const earlier = await ledger.read((db) => earlierNotices(db, row));
    return earlier.every((one) => lease.delivered?.(one) === true) ? row : undefined;
  }
  return ledger.transaction(async (trx) => {
    const earlier = await earlierNotices(trx, row);
    if (!earlier.every((one) => lease.delivered?.(one) === true)) return undefined;
    const claimed = await trx
      .updateTable('toolgate_notices')
      .set({ lease_owner: lease.instance, lease_expires_at: lease.now + lease.leaseMs, fence })
      .where('call_id', '=', row.call_id)
      .where('principal', '=', row.principal)
      .where('channel', '=', row.channel)
      .where('id', '=', row.id)
      .where('fence', '=', row.fence)
      .where('delivered_at', 'is', null)
      .executeTakeFirst();
    return Number(claimed.numUpdatedRows) === 1 ? { ...row, fence } : undefined;
  });
}

/** The notices of the same call to the same principal through the same channel, before `row` and not delivered. */
function earlierNotices(
  db: Kysely<LedgerDatabase>,
  row: NoticesTable,
): Promise<Pick<NoticesTable, 'id' | 'channel'>[]> {
  return db
    .selectFrom('toolgate_notices')
    .select(['id', 'channel'])
    .where('call_id', '=', row.call_id)
    .where('principal', '=', row.principal)
    .where('channel', '=', row.channel)
    .where('delivered_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('created_at', '<', row.created_at),
        eb.and([eb('created_at', '=', row.created_at), eb('rank', '<', row.rank)]),
      ]),
    )
    .limit(20)
    .execute();
}

/**
 * The `ref`s channels gave the earlier notices of this call to this principal, oldest first and
 * each once. Every one is updated at the end: the first card and a reminder's may have been
 * posted by different app servers, and neither knows of the other's.
 *
 * @example
 * for (const ref of await refsOf(ledger, claimed)) await channel.update(notice, ref, { signal });
 */
export async function refsOf(ledger: Ledger, notice: NoticesTable): Promise<readonly string[]> {
  const rows = await ledger.read((db) =>
    db
      .selectFrom('toolgate_notices')
      .select('ref')
      .where('call_id', '=', notice.call_id)
      .where('principal', '=', notice.principal)
      .where('channel', '=', notice.channel)
      .where('ref', 'is not', null)
      .orderBy('delivered_at', 'asc')
      .execute(),
  );
  return [...new Set(rows.flatMap((row) => (row.ref === null ? [] : [row.ref])))];
}

/**
 * Writes what one delivery came to, if the claim is still this delivery's: delivered (with the
 * channel's `ref`), or to be tried again at `retryAt`. `false` when the claim had passed on.
 *
 * @example
 * await settleNotice(trx, claimed, { delivered: true, ref: 'msg_1' }, now);
 */
export async function settleNotice(
  trx: Trx,
  claimed: ClaimedNotice,
  outcome:
    | { readonly delivered: true; readonly ref?: string }
    | { readonly delivered: false; readonly retryAt: number },
  now: number,
): Promise<boolean> {
  const values = outcome.delivered
    ? { delivered_at: now, ref: outcome.ref ?? null, attempts: claimed.attempts + 1 }
    : { due_at: outcome.retryAt, attempts: claimed.attempts + 1 };
  const result = await trx
    .updateTable('toolgate_notices')
    .set({ ...values, lease_owner: null, lease_expires_at: null })
    .where('call_id', '=', claimed.call_id)
    .where('principal', '=', claimed.principal)
    .where('channel', '=', claimed.channel)
    .where('id', '=', claimed.id)
    .where('fence', '=', claimed.fence)
    .where('delivered_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** {@link settleNotice}'s write of a delivery, for a statement that records its event with it. */
const SETTLE_DELIVERED = statement(
  'update "toolgate_notices" set "delivered_at" = ?, "ref" = ?, "attempts" = ?, "lease_owner" = null, "lease_expires_at" = null where "call_id" = ? and "principal" = ? and "channel" = ? and "id" = ? and "fence" = ? and "delivered_at" is null',
);

/**
 * The write that marks a claimed notice delivered, as {@link settleNotice} does, for
 * `Ledger.recordWith`: its event is recorded only if the claim was still this delivery's, and on
 * PostgreSQL the mark and the event are one statement.
 *
 * @example
 * await ledger.recordWith(trx, deliveredWrite(claimed, 'msg_1', now), [event]);
 */
export function deliveredWrite(claimed: ClaimedNotice, ref: string | undefined, now: number): RowWrite {
  return {
    statement: SETTLE_DELIVERED,
    values: [
      now,
      ref ?? null,
      claimed.attempts + 1,
      claimed.call_id,
      claimed.principal,
      claimed.channel,
      claimed.id,
      claimed.fence,
    ],
  };
}
