import { createHmac, hash } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import canonicalize from 'canonicalize';
import type { Reason } from '@toolgate/core';
import type { EventsTable } from '../schema.ts';

/** What the first event follows. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * How each event's hash is made from the one before it: SHA-256 by default, HMAC-SHA256 with the
 * ledger's `auditKey`, so that someone who can write to the database but lacks the key cannot
 * recompute the chain after changing it.
 *
 * @example
 * const hasher = chainHasher(process.env.TOOLGATE_AUDIT_KEY);
 * const hash = hasher.hash(GENESIS_HASH, row);
 */
export interface ChainHasher {
  readonly algorithm: 'sha256' | 'hmac-sha256';
  readonly hash: (prevHash: string, row: EventsTable, seq?: number) => string;
}

/**
 * The hasher for a ledger, keyed when an audit key is given.
 *
 * @example
 * const hasher = chainHasher(undefined); // plain SHA-256
 */
export function chainHasher(auditKey: string | Uint8Array | undefined): ChainHasher {
  if (auditKey !== undefined && auditKey.length === 0) {
    throw new Error(
      'auditKey is empty: pass the secret the chain is keyed with, or leave auditKey out for plain SHA-256.',
    );
  }
  return {
    algorithm: auditKey === undefined ? 'sha256' : 'hmac-sha256',
    // `seq` lets verify() ask whether a row was written under another number (renumbering).
    hash: (prevHash, row, seq = row.seq) =>
      auditKey === undefined
        ? hash('sha256', prevHash + hashedFields(row, seq))
        : createHmac('sha256', auditKey)
            .update(prevHash + hashedFields(row, seq))
            .digest('hex'),
  };
}

/**
 * RFC 8785 canonical JSON of the event as readers see it: the same bytes on every platform and
 * after a round trip through either database, since the reason is hashed as it is stored. Written
 * out field by field, keys in their canonical order (RFC 8785 writes strings and numbers as
 * `JSON.stringify` does), which is what canonicalising the object gives, without sorting its keys
 * for every event; only the reason, which a caller shapes, goes through the general form.
 *
 * @example
 * hashedFields(row, row.seq); // '{"actor":"user_42","at":1767225600000,"callId":"call_1",…}'
 */
export function hashedFields(row: EventsTable, seq: number): string {
  const reason = row.reason === null ? 'null' : (canonicalize(JSON.parse(row.reason) as Reason) as string);
  // The record is hashed as the text stored, so the trail also proves what each call held
  // (its input when approved, its output when committed) without re-serialising it.
  const record = row.record === null ? 'null' : `"${hash('sha256', row.record)}"`;
  const text = (value: string | null) => (value === null ? 'null' : JSON.stringify(value));
  return (
    `{"actor":${text(row.actor)},"at":${number(row.at)},"callId":${text(row.call_id)},"from":${text(row.from_status)},` +
    `"reason":${reason},"record":${record},"seq":${number(seq)},"session":${text(row.session)},"to":${text(row.to_status)}}`
  );
}

/** A number as RFC 8785 writes it (as `JSON.stringify` does; a value read back as text is written as that text). */
function number(value: number | string): string {
  return JSON.stringify(value);
}

/**
 * What `verify()` answers: how many events the chain holds (and the last one's hash, to keep
 * somewhere else), or the first event that was changed, removed or inserted.
 *
 * @example
 * const result: Verification = { ok: false, seq: 3, why: 'event 3 was changed: its fields no longer match its hash' };
 */
export type Verification =
  { ok: true; events: number; hash: string } | { ok: false; seq: number; why: string };

/**
 * How `verifyChain` reads the ledger: events in `seq` order, and the chain head.
 *
 * @example
 * const reader: ChainReader = { after: (seq, limit) => rowsAfter(seq, limit), head: () => readHead() };
 */
export interface ChainReader {
  readonly after: (seq: number, limit: number) => Promise<EventsTable[]>;
  readonly head: () => Promise<{ last_seq: number; last_hash: string; algorithm: string | null }>;
}

/**
 * What `verify()` takes: where to start (a verification kept from before), and what to tell as it
 * walks.
 *
 * @example
 * const kept = await ledger.verify();
 * // …later: walk only what was appended since, checking that the kept head is still there.
 * if (kept.ok) await ledger.verify({ from: kept, onProgress: ({ seq, head }) => log(`${seq}/${head}`) });
 */
export interface VerifyOptions {
  /**
   * A checkpoint: `{ events, hash }` as an earlier `verify()` answered it (kept somewhere the
   * database's writers cannot reach). The walk checks that event `events` still has that hash and
   * walks only the events after it; what came before is taken as the checkpoint vouched for it.
   */
  readonly from?: { readonly events: number; readonly hash: string };
  /**
   * Called after each page (500 at most): first of the events walked, then of the call rows
   * checked against their last event (every call's, from a checkpoint too: a row can be changed
   * at any time, and nothing chains it).
   */
  readonly onProgress?: (progress: VerifyProgress) => void;
}

/**
 * How far a `verify()` has got: the last seq walked, the chain's head, how many events this walk
 * has checked, and how many call rows it has checked since (0 while it walks the events).
 *
 * @example
 * const progress: VerifyProgress = { seq: 1500, head: 400_000, walked: 1500, calls: 0 };
 */
export interface VerifyProgress {
  readonly seq: number;
  readonly head: number;
  readonly walked: number;
  readonly calls: number;
}

const PAGE = 500;

/** The checkpoint's last event, checked; or why the chain no longer holds it. */
async function checkpoint(
  read: ChainReader,
  hasher: ChainHasher,
  from: NonNullable<VerifyOptions['from']>,
  head: number,
): Promise<EventsTable | Verification | undefined> {
  const { events, hash } = from;
  if (!Number.isSafeInteger(events) || events < 0 || typeof hash !== 'string') {
    throw new TypeError('verify({ from }) takes { events, hash } as an earlier verify() answered them.');
  }
  if (events === 0) {
    return hash === GENESIS_HASH
      ? undefined
      : {
          ok: false,
          seq: 0,
          why: 'the checkpoint is not one of this chain: a chain of no events has no other hash than the start',
        };
  }
  if (head < events)
    return {
      ok: false,
      seq: head + 1,
      why: `the chain was cut: it ends at event ${head}, but the checkpoint covers ${events} events`,
    };
  const [row] = await read.after(events - 1, 1);
  if (row?.seq !== events)
    return {
      ok: false,
      seq: events,
      why: `event ${events}, the last one the checkpoint covers, was removed`,
    };
  if (row.hash !== hash || hasher.hash(row.prev_hash, row) !== row.hash) {
    return {
      ok: false,
      seq: events,
      why: `event ${events} is not the one the checkpoint covers: it, or the history before it, was rewritten`,
    };
  }
  return row;
}

/**
 * Walks the chain from event 1 (or from a checkpoint) and names the first event that was changed,
 * removed or inserted, one page at a time: its memory does not grow with the chain. Events
 * appended while it walks are walked too; it never reports them as inserted, because an append
 * moves the chain head in the same transaction as it writes the event.
 *
 * @example
 * const result = await verifyChain(reader, chainHasher(undefined));
 * if (!result.ok) console.error(`audit trail broken at event ${result.seq}: ${result.why}`);
 */
export async function verifyChain(
  read: ChainReader,
  hasher: ChainHasher,
  { from, onProgress }: VerifyOptions = {},
): Promise<Verification> {
  let head = await read.head();
  if (head.algorithm !== null && head.algorithm !== hasher.algorithm) {
    return {
      ok: false,
      seq: 1,
      why: `the chain is hashed with ${head.algorithm}, but the ledger was opened for ${hasher.algorithm}${hasher.algorithm === 'sha256' ? ' (pass the auditKey it was written with)' : ''}`,
    };
  }
  let previous: EventsTable | undefined;
  let beforePrevious: EventsTable | undefined;
  if (from !== undefined) {
    const start = await checkpoint(read, hasher, from, head.last_seq);
    if (start !== undefined && !('prev_hash' in start)) return start;
    previous = start;
  }
  const first = (previous?.seq ?? 0) + 1;
  let expected = first;
  for (;;) {
    if (expected > first) {
      onProgress?.({
        seq: expected - 1,
        head: Math.max(head.last_seq, expected - 1),
        walked: expected - first,
        calls: 0,
      });
      // On SQLite every read runs on the event loop: between pages, whatever else waits gets a turn.
      await turn();
    }
    const page = await read.after(expected - 1, PAGE);
    if (page.length === 0) {
      head = await read.head();
      if (head.last_seq >= expected) {
        // Appended since the page was read, or removed: look again before saying which.
        if ((await read.after(expected - 1, 1)).length > 0) continue;
        return {
          ok: false,
          seq: expected,
          why: `event ${expected} was removed: the chain ends at event ${expected - 1}, but its head says ${head.last_seq}`,
        };
      }
      const lastHash = previous?.hash ?? GENESIS_HASH;
      if (head.last_hash !== lastHash) {
        return {
          ok: false,
          seq: expected - 1,
          why: `event ${expected - 1} was changed: its hash is not the one the chain head recorded`,
        };
      }
      return { ok: true, events: expected - 1, hash: lastHash };
    }
    for (const [index, row] of page.entries()) {
      const seq = expected;
      if (row.seq !== seq) {
        return { ok: false, seq, why: `event ${seq} was removed: event ${row.seq} follows event ${seq - 1}` };
      }
      if (row.seq > head.last_seq) {
        head = await read.head();
        if (row.seq > head.last_seq) {
          return {
            ok: false,
            seq,
            why: `event ${seq} was inserted after the end of the chain (its head is event ${head.last_seq})`,
          };
        }
      }
      const prevHash = previous?.hash ?? GENESIS_HASH;
      if (hasher.hash(row.prev_hash, row) !== row.hash) {
        if (seq > 1 && hasher.hash(row.prev_hash, row, seq - 1) === row.hash) {
          return {
            ok: false,
            seq: seq - 1,
            why: `event ${seq - 1} was inserted: the next event was written as event ${seq - 1}`,
          };
        }
        if (hasher.hash(row.prev_hash, row, seq + 1) === row.hash) {
          return {
            ok: false,
            seq,
            why: `event ${seq} was removed: the event now numbered ${seq} was written as event ${seq + 1}`,
          };
        }
        const next = page[index + 1] ?? (await read.after(seq, 1))[0];
        if (
          next?.seq === seq + 1 &&
          next.prev_hash === prevHash &&
          hasher.hash(next.prev_hash, next, seq) === next.hash
        ) {
          return {
            ok: false,
            seq,
            why: `event ${seq} was inserted: event ${seq + 1} was written as event ${seq}, right after event ${seq - 1}`,
          };
        }
        const key =
          seq === 1 && hasher.algorithm === 'hmac-sha256'
            ? ' (or the ledger was opened with another auditKey than the one it was written with)'
            : '';
        return { ok: false, seq, why: `event ${seq} was changed: its fields no longer match its hash${key}` };
      }
      if (row.prev_hash !== prevHash) {
        if (previous === undefined) {
          return {
            ok: false,
            seq,
            why: `event ${seq} was changed: it does not follow the start of the chain`,
          };
        }
        if (row.prev_hash === (beforePrevious?.hash ?? GENESIS_HASH)) {
          return {
            ok: false,
            seq: seq - 1,
            why: `event ${seq - 1} was inserted: event ${seq} was written right after event ${seq - 2}`,
          };
        }
        return {
          ok: false,
          seq: seq - 1,
          why: `event ${seq - 1} was changed: event ${seq} was written after an event with another hash`,
        };
      }
      beforePrevious = previous;
      previous = row;
      expected = seq + 1;
    }
  }
}
