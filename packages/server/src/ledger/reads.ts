import type { Kysely } from 'kysely';
import { firstChangedCall } from './chain/chain-check.ts';
import {
  verifyChain,
  type ChainHasher,
  type Verification,
  type VerifyOptions,
  type VerifyProgress,
} from './chain/chain.ts';
import { toEvent } from './event-rows.ts';
import type { Ledger } from './ledger.ts';
import type { LedgerDatabase } from './schema.ts';
import { readRecord } from './stored-record.ts';

const DEFAULT_LIMIT = 1000;

/** How the reads run: through the ledger's tracked, error-reading `read`. */
type Read = <T>(what: string, query: () => Promise<T>) => Promise<T>;

/**
 * The ledger's reads of its events: pages after a seq, the head, a session's snapshot, and the
 * walk that verifies the chain.
 *
 * @example
 * const reads = createEventReads(db, transactions.read, hasher);
 * const page = await reads.eventsAfter(0, { limit: 100 });
 */
export function createEventReads(
  db: Kysely<LedgerDatabase>,
  read: Read,
  hasher: ChainHasher,
  chained: () => Promise<void> = () => Promise.resolve(),
): Pick<Ledger, 'eventsAfter' | 'movesAfter' | 'head' | 'snapshot' | 'verify'> {
  const eventsAfter = (
    after: number,
    { session, limit = DEFAULT_LIMIT }: { readonly session?: string; readonly limit?: number } = {},
  ) =>
    read('ledger.eventsAfter', async () => {
      await chained();
      let query = db.selectFrom('toolgate_events').selectAll().where('seq', '>', after);
      if (session !== undefined) query = query.where('session', '=', session);
      const rows = await query.orderBy('seq').limit(limit).execute();
      return rows.map(toEvent);
    });

  const movesAfter = (
    after: number,
    { session, limit = DEFAULT_LIMIT }: { readonly session?: string; readonly limit?: number } = {},
  ) =>
    read('ledger.movesAfter', async () => {
      // A refusal stores no record (it leaves the call as it was): it goes out with the call as it stands.
      let query = db
        .selectFrom('toolgate_events')
        .leftJoin('toolgate_calls', 'toolgate_calls.id', 'toolgate_events.call_id')
        .selectAll('toolgate_events')
        .select('toolgate_calls.record as standing')
        .where('toolgate_events.seq', '>', after)
        // An event of no call (a channel's refused vote) is no move: left out by the query, not
        // after it, so that a page of nothing else cannot stop a reader from going past it.
        .where((eb) =>
          eb.or([eb('toolgate_events.record', 'is not', null), eb('toolgate_calls.record', 'is not', null)]),
        );
      if (session !== undefined) query = query.where('toolgate_events.session', '=', session);
      const rows = await query.orderBy('toolgate_events.seq').limit(limit).execute();
      return rows.flatMap((row) => {
        const record = row.record ?? row.standing;
        return record === null ? [] : [{ event: toEvent(row), record: readRecord(record) }];
      });
    });

  const readHead = () =>
    db.selectFrom('toolgate_chain').select('last_seq').where('id', '=', 1).executeTakeFirstOrThrow();
  const head = () =>
    read('ledger.head', async () => {
      await chained();
      return (await readHead()).last_seq;
    });

  const snapshot = (session: string) =>
    read('ledger.snapshot', async () => {
      await chained();
      const seq = (await readHead()).last_seq;
      const last = db
        .selectFrom('toolgate_events')
        .select((eb) => ['call_id', eb.fn.max('seq').as('last'), eb.fn.min('seq').as('first')])
        .where('session', '=', session)
        .where('seq', '<=', seq)
        .where('record', 'is not', null)
        .groupBy('call_id')
        .as('calls');
      // In the order the calls were proposed (two written by one turn may reach the ledger in the
      // other order), the first write breaking ties.
      const rows = await db
        .selectFrom('toolgate_events')
        .innerJoin(last, 'calls.last', 'toolgate_events.seq')
        .innerJoin('toolgate_calls', 'toolgate_calls.id', 'toolgate_events.call_id')
        .select(['toolgate_events.record', 'calls.first'])
        .orderBy('toolgate_calls.created_at')
        .orderBy('calls.first')
        .execute();
      return { seq, calls: rows.map((row) => readRecord(row.record as string)) };
    });

  const verify = (options: VerifyOptions = {}): Promise<Verification> =>
    read('ledger.verify', async () => {
      await chained();
      let reached: VerifyProgress | undefined;
      const { onProgress } = options;
      const walked = await verifyChain(
        {
          after: (seq, limit) =>
            db
              .selectFrom('toolgate_events')
              .selectAll()
              .where('seq', '>', seq)
              .orderBy('seq')
              .limit(limit)
              .execute(),
          head: () =>
            db
              .selectFrom('toolgate_chain')
              .select(['last_seq', 'last_hash', 'algorithm'])
              .where('id', '=', 1)
              .executeTakeFirstOrThrow(),
        },
        hasher,
        { ...options, onProgress: (progress) => ((reached = progress), onProgress?.(progress)) },
      );
      if (!walked.ok) return walked;
      // The chain holds; so must the rows it covers: a call's row says what its last event says.
      const walkedTo = reached ?? { seq: walked.events, head: walked.events, walked: 0, calls: 0 };
      const changed = await firstChangedCall(db, (calls) => onProgress?.({ ...walkedTo, calls }));
      if (changed === undefined) return walked;
      return {
        ok: false,
        seq: changed.seq,
        why: `call "${changed.id}" was changed in toolgate_calls: its record is not the one its last event (${changed.seq}) holds`,
      };
    });

  return { eventsAfter, movesAfter, head, snapshot, verify };
}
