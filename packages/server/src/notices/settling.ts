import type { Transaction } from 'kysely';
import type { Ledger, NewLedgerEvent } from '../ledger/ledger.ts';
import type { LedgerDatabase, NoticesTable } from '../ledger/schema.ts';
import { deliveredWrite, settleNotice, type ClaimedNotice } from './notice-rows.ts';

type Trx = Transaction<LedgerDatabase>;

/** How long a delivery waits for a move of this gate to record it before it is recorded on its own. */
const ALONE_AFTER_MS = 10;

/**
 * Notices a channel took that the ledger does not say are delivered yet. Recording a delivery
 * (the row marked delivered, and its `notice_delivered` event in the chain) needs a transaction;
 * instead of one of its own, it rides in the next move this gate writes (which runs the notice
 * watch in its transaction), or, when none comes within a few milliseconds, in one of its own
 * with every other delivery waiting then. Until it is recorded the notice stays claimed by this
 * process: if the process dies first, its claim runs out and the notice is delivered again, with
 * the same id (at least once, as before).
 *
 * A move that carried deliveries may still roll back: a while later, the ledger is read for those
 * still not marked delivered, and they are written again in a transaction of their own (the
 * fencing token makes a second write of one recorded meanwhile by another process a no-op).
 *
 * @example
 * settling.delivered(claimed, 'msg_1');
 * await settling.carry(trx, { id: next.id, status: next.status }); // inside a move's transaction
 */
export interface NoticeSettling {
  /** The channel took `claimed` (with its `ref`, when it gave one) at `at`. */
  readonly delivered: (claimed: ClaimedNotice, ref: string | undefined, at: number) => void;
  /** Whether this process holds the notice as delivered, not recorded yet: it is not delivered again. */
  readonly holds: (row: Pick<NoticesTable, 'id' | 'channel'>) => boolean;
  /** The `ref`s of deliveries held here for this call, principal and channel, oldest first. */
  readonly refsOf: (row: Pick<NoticesTable, 'call_id' | 'principal' | 'channel'>) => readonly string[];
  /** Inside a move's transaction: records the deliveries waiting now (`move`: the call it moves, and its status). */
  readonly carry: (trx: Trx, move: { readonly id: string; readonly status: string }) => Promise<void>;
  /** Records every delivery held here that no move carried, in a transaction of its own. */
  readonly flush: () => Promise<void>;
  /** Records what is held, and arms nothing more. */
  readonly stop: () => Promise<void>;
}

/**
 * Notices this process wrote, claimed as they were written: once the transaction that wrote them
 * commits, this process delivers them (see `keepNotices`).
 *
 * @example
 * fresh.wrote([{ id: 'ntc_…', channel: 'webhook', call_id: 'w1' }]);
 */
export interface FreshNotices {
  readonly wrote: (rows: readonly Pick<NoticesTable, 'id' | 'channel' | 'call_id'>[]) => void;
  /** The notices written since the last `take`, with when (`performance.now()`), and forgets them. */
  readonly take: () => readonly FreshNotice[];
  /** Gives back notices `take` gave that were not seen yet (their transaction has not committed). */
  readonly keep: (notices: readonly FreshNotice[]) => void;
  readonly size: () => number;
}

/** A notice this process wrote, and when. */
export interface FreshNotice {
  readonly id: string;
  readonly channel: string;
  readonly call: string;
  readonly at: number;
}

/**
 * Builds the notices this process wrote and has not delivered yet.
 *
 * @example
 * const fresh = freshNotices();
 */
export function freshNotices(): FreshNotices {
  let notices: FreshNotice[] = [];
  return {
    wrote(rows) {
      const at = performance.now();
      for (const row of rows) notices.push({ id: row.id, channel: row.channel, call: row.call_id, at });
    },
    take() {
      const taken = notices;
      notices = [];
      return taken;
    },
    keep(kept) {
      notices.push(...kept);
    },
    size: () => notices.length,
  };
}

interface Held {
  readonly claimed: ClaimedNotice;
  readonly ref: string | undefined;
  readonly at: number;
  /** When a move's transaction wrote it (`performance.now()`); unset while it waits for one. */
  carriedAt?: number;
}

/**
 * Builds the deliveries a gate holds until they are recorded.
 *
 * @example
 * const settling = noticeSettling({ ledger, leaseMs, onError });
 */
export function noticeSettling(parts: {
  readonly ledger: Pick<Ledger, 'transaction' | 'recordEvents' | 'recordWith' | 'read'>;
  readonly leaseMs: number;
  readonly onError: (error: unknown) => void;
}): NoticeSettling {
  const { ledger, onError } = parts;
  // A carried delivery not seen committed by then is written again, well before its claim runs out.
  const confirmMs = Math.max(ALONE_AFTER_MS, Math.min(1000, parts.leaseMs / 4));
  const held = new Map<string, Held>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let flushing: Promise<void> = Promise.resolve();

  const keyOf = (row: Pick<NoticesTable, 'id' | 'channel'>) => `${row.channel}\u0000${row.id}`;

  // A wall-clock pause, not the gate's clock: it batches writes, and a test's fake clock standing
  // still must not keep a delivery from being recorded.
  const arm = (ms: number) => {
    if (timer !== undefined || stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush().catch(onError);
    }, ms);
    timer.unref?.();
  };

  /** The status a delivery's event shows its call in: the move's, or as the call's row has it. */
  const statusOf = async (trx: Trx, claimed: ClaimedNotice, status?: { id: string; status: string }) =>
    (status?.id === claimed.call_id
      ? status.status
      : (
          await trx
            .selectFrom('toolgate_calls')
            .select('status')
            .where('id', '=', claimed.call_id)
            .executeTakeFirst()
        )?.status) ?? 'awaiting_approval';

  /** Writes `entries` in `trx`: each row marked delivered if its claim is still this one, and its event. */
  const write = async (trx: Trx, entries: readonly Held[], status?: { id: string; status: string }) => {
    // One delivery (the common case): its mark and its event go together, one statement on PostgreSQL.
    if (entries.length === 1) {
      const entry = entries[0] as Held;
      const event = deliveryEvent(entry, await statusOf(trx, entry.claimed, status));
      await ledger.recordWith(trx, deliveredWrite(entry.claimed, entry.ref, entry.at), [event]);
      return;
    }
    const events: NewLedgerEvent[] = [];
    for (const entry of entries) {
      const { claimed } = entry;
      const outcome =
        entry.ref === undefined ? { delivered: true as const } : { delivered: true as const, ref: entry.ref };
      if (!(await settleNotice(trx, claimed, outcome, entry.at))) continue;
      events.push(deliveryEvent(entry, await statusOf(trx, claimed, status)));
    }
    if (events.length > 0) await ledger.recordEvents(trx, events);
  };

  /** Of carried deliveries, those whose carrier did not commit (or that another process took since). */
  const uncommitted = async (carried: readonly [string, Held][]): Promise<Set<string>> => {
    if (carried.length === 0) return new Set();
    // By their calls, which lead the table's key.
    const calls = [...new Set(carried.map(([, entry]) => entry.claimed.call_id))];
    const rows = await ledger.read((db) =>
      db
        .selectFrom('toolgate_notices')
        .select(['id', 'channel'])
        .where('call_id', 'in', calls)
        .where('delivered_at', 'is', null)
        .execute(),
    );
    return new Set(rows.map(keyOf));
  };

  const flush = (): Promise<void> => {
    const run = flushing.then(async () => {
      const now = performance.now();
      const waiting = [...held.entries()].filter(([, entry]) => entry.carriedAt === undefined);
      const carried = [...held.entries()].filter(
        ([, entry]) => entry.carriedAt !== undefined && now - entry.carriedAt >= confirmMs,
      );
      const again = await uncommitted(carried);
      const due = [...waiting, ...carried.filter(([key]) => again.has(key))];
      if (due.length > 0)
        await ledger.transaction((trx) =>
          write(
            trx,
            due.map(([, entry]) => entry),
          ),
        );
      for (const [key, entry] of [...waiting, ...carried]) if (held.get(key) === entry) held.delete(key);
    });
    flushing = run.catch(() => undefined);
    return run.finally(() => {
      if (held.size > 0) arm(confirmMs);
    });
  };

  return {
    delivered(claimed, ref, at) {
      held.set(keyOf(claimed), { claimed, ref, at });
      arm(ALONE_AFTER_MS);
    },
    holds: (row) => held.has(keyOf(row)),
    refsOf(row) {
      return [...held.values()]
        .filter(
          ({ claimed, ref }) =>
            ref !== undefined &&
            claimed.call_id === row.call_id &&
            claimed.principal === row.principal &&
            claimed.channel === row.channel,
        )
        .sort((a, b) => a.at - b.at)
        .map(({ ref }) => ref as string);
    },
    async carry(trx, move) {
      const waiting = [...held.values()].filter((entry) => entry.carriedAt === undefined);
      if (waiting.length === 0) return;
      const carriedAt = performance.now();
      for (const entry of waiting) entry.carriedAt = carriedAt;
      await write(trx, waiting, move);
    },
    flush,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      // What a carrier may have rolled back is written again now: a second write is a no-op.
      for (const entry of held.values()) if (entry.carriedAt !== undefined) entry.carriedAt = -Infinity;
      await flush();
    },
  };
}

/** The event of a delivery, showing its call in `status` (a delivery moves nothing). */
function deliveryEvent(entry: Held, status: string): NewLedgerEvent {
  const { claimed, ref } = entry;
  return {
    callId: claimed.call_id,
    session: claimed.session,
    from: status as NewLedgerEvent['to'],
    to: status as NewLedgerEvent['to'],
    actor: `toolgate:${claimed.channel}`,
    at: entry.at,
    reason: {
      code: 'notice_delivered',
      message: `${describeNotice(claimed)} delivered${ref === undefined ? '' : ` (ref ${JSON.stringify(ref)})`}`,
    },
  };
}

/** How a notice is named in the audit trail and in errors. */
export function describeNotice(notice: NoticesTable): string {
  return `notice ${notice.id} (${notice.kind}) to ${JSON.stringify(notice.principal)} through "${notice.channel}"`;
}
