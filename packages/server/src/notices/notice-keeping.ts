import type { GateParts } from '../gate/parts.ts';
import { dueLoop } from '../timers/due-loop.ts';
import { deliverNotice } from './deliver.ts';
import type { Channel } from './notice.ts';
import type { NoticesTable } from '../ledger/schema.ts';
import type { FreshNotices, NoticeSettling } from './settling.ts';
import { claimNotice, dueNotices, nextNoticeAt, type ClaimedNotice } from './notice-rows.ts';

/**
 * Delivers the ledger's notices on whichever process claims them: when a move or timer may have
 * written some (`poke`), at the soonest time one is due again, and at least every `leaseMs`.
 *
 * @example
 * const notices = keepNotices(parts, channels);
 * notices.poke();
 */
export interface NoticeKeeping {
  /** Claims and delivers every notice due now that nobody holds; resolves once each was tried and recorded. */
  readonly sweep: () => Promise<void>;
  /** Notices may have been written: look now. */
  readonly poke: () => void;
  /** Another process committed: look again when a notice is next due or its claim runs out. */
  readonly heard: () => void;
  /** This process committed: deliver the notices it wrote, claimed, once they are there to read. */
  readonly fresh: () => void;
  readonly stop: () => Promise<void>;
}

const SWEEP_LIMIT = 100;

const keyOf = (row: Pick<NoticesTable, 'id' | 'channel'>) => `${row.channel}\u0000${row.id}`;

/**
 * Builds the notice keeper of a gate with channels.
 *
 * @example
 * const notices = keepNotices(parts, checkChannels(options.channels), settling, freshNotices());
 */
export function keepNotices(
  parts: Pick<GateParts, 'options' | 'settings' | 'ledger' | 'life'>,
  channels: readonly Channel[],
  settling: NoticeSettling,
  written: FreshNotices,
): NoticeKeeping {
  const { ledger, settings, life } = parts;
  const { clock, leaseMs, instance, onError } = settings;
  const closing = new AbortController();
  // Notices being delivered by this process now, by either path: neither takes one the other has.
  const inFlight = new Set<string>();
  // Delivered lately: a pass whose read began before such a delivery was recorded still sees it due.
  const lately = recentKeys(leaseMs);
  const busy = (row: NoticesTable) =>
    [inFlight, lately].some((keys) => keys.has(keyOf(row))) || settling.holds(row);
  // A notice that waited for an earlier one: once any delivery is taken, the loop looks again.
  let waiting = false;

  /** Delivers one row under `claim`; answers whether the channel took it. */
  const deliverOne = async (
    row: NoticesTable,
    claim: () => Promise<ClaimedNotice | undefined>,
  ): Promise<boolean> => {
    if (busy(row) || loop.stopped()) return false;
    const key = keyOf(row);
    inFlight.add(key);
    try {
      const claimed = await claim();
      if (claimed === undefined) {
        waiting = true;
        return false;
      }
      const taken = (await deliverNotice(parts, channels, claimed, closing.signal, settling)) === true;
      if (taken) lately.add(key);
      if (taken && waiting) {
        waiting = false;
        loop.poke(clock.now());
      }
      return taken;
    } catch (error) {
      // Nothing was written: the claim runs out, and this or another process tries again then.
      onError(error);
      return false;
    } finally {
      inFlight.delete(key);
    }
  };

  /**
   * Delivers the notices this process wrote since the last pass, claimed as they were written:
   * one read for the notices of their calls, then each group (a call, a principal, a channel) in
   * order, the ask before its end, with no claim to take. Those not committed yet are looked for
   * again at the next commit; anything else (someone else's claim, a notice due later, one an
   * earlier notice holds up) is left to the loop.
   */
  const freshPass = async (): Promise<void> => {
    const taken = written.take();
    if (taken.length === 0) return;
    const ids = new Set(taken.map((notice) => notice.id));
    const rows = await ledger.read((db) =>
      db
        .selectFrom('toolgate_notices')
        .selectAll()
        .where('call_id', 'in', [...new Set(taken.map((notice) => notice.call))])
        .execute(),
    );
    const seen = new Set(rows.filter((row) => ids.has(row.id)).map(keyOf));
    const young = performance.now() - leaseMs;
    written.keep(taken.filter((notice) => !seen.has(keyOf(notice)) && notice.at > young));
    const now = clock.now();
    let leftover = false;
    await Promise.all(
      groupsOf(rows.filter((row) => row.delivered_at === null && !settling.holds(row))).map(async (group) => {
        for (const row of group) {
          const mine =
            row.lease_owner === instance &&
            Number(row.lease_expires_at ?? 0) > now &&
            Number(row.due_at) <= now &&
            !busy(row);
          if (!mine || !(await deliverOne(row, () => Promise.resolve(row)))) {
            leftover = true;
            return;
          }
        }
      }),
    );
    if (leftover) loop.poke(nextNoticeAt(ledger));
  };
  let passing: Promise<void> = Promise.resolve();

  /** Tries every notice due now; answers whether one was delivered while another was not (it may wait for it). */
  const sweepOnce = async (): Promise<boolean> => {
    const due = await dueNotices(ledger, clock.now(), SWEEP_LIMIT, instance);
    const delivered = await Promise.all(
      // A notice this process delivered and has not recorded yet is not delivered again.
      due
        .filter((row) => !busy(row))
        .map((row) =>
          deliverOne(row, () =>
            claimNotice(ledger, row, {
              instance,
              now: clock.now(),
              leaseMs,
              delivered: settling.holds,
            }),
          ),
        ),
    );
    return delivered.includes(true) && delivered.includes(false);
  };
  const loop = dueLoop({
    clock,
    leaseMs,
    onError,
    closed: () => life.closed,
    running: true,
    pass: sweepOnce,
    // A delivery may free a notice of the same principal that waited for it (an ask before its end): look again.
    next: (again) => (again ? clock.now() : nextNoticeAt(ledger)),
  });

  return {
    sweep: async () => {
      // What this process wrote and is delivering now is part of what is due.
      await passing;
      await loop.sweep();
      await passing;
      // Asked for (a recovery pass): what was delivered is recorded before it resolves.
      await settling.flush();
    },
    poke: () => loop.poke(clock.now()),
    heard: () => loop.poke(nextNoticeAt(ledger)),
    fresh() {
      if (written.size() === 0) return;
      passing = passing.then(freshPass).catch(onError);
    },
    async stop() {
      closing.abort();
      await loop.stop();
      await passing;
      await settling.stop();
    },
  };
}

/**
 * Keys added within the last `ms` (wall clock), oldest dropped as new ones come: the notices this
 * process delivered lately, recorded or not, which it does not deliver again.
 */
function recentKeys(ms: number): {
  readonly add: (key: string) => void;
  readonly has: (key: string) => boolean;
} {
  const added = new Map<string, number>();
  return {
    add(key) {
      const now = performance.now();
      added.delete(key);
      added.set(key, now);
      for (const [old, at] of added) {
        if (now - at < ms) break;
        added.delete(old);
      }
    },
    has: (key) => added.has(key),
  };
}

/** Rows by call, principal and channel, each group in the order its notices go out: the ask before its end. */
function groupsOf(rows: readonly NoticesTable[]): NoticesTable[][] {
  const groups = new Map<string, NoticesTable[]>();
  for (const row of rows) {
    const group = `${row.call_id}\u0000${row.principal}\u0000${row.channel}`;
    groups.set(group, [...(groups.get(group) ?? []), row]);
  }
  const order = (a: NoticesTable, b: NoticesTable) =>
    Number(a.created_at) - Number(b.created_at) || a.rank - b.rank;
  return [...groups.values()].map((group) => group.sort(order));
}
