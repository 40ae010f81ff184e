import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { Reason, ToolCallRecord, ToolCallStatus } from '@toolgate/core';
import type { RefusalCode } from '../gate/decision.ts';
import type { LedgerMove } from '../feed/feed.ts';
import { readRecord } from './stored-record.ts';
import { Migrator, sql, type ControlledTransaction, type Kysely, type Transaction } from 'kysely';
import { chainHasher, verifyChain, type ChainHasher, type Verification } from './chain.ts';
import { closedLedger, unavailable, type Failure } from './error.ts';
import { migrations } from './migrations.ts';
import type { EventsTable, LedgerDatabase } from './schema.ts';

/**
 * One entry of the audit trail: a call's move from one status to another (or, with `from === to`
 * and a `reason`, a refusal), who made it and when. `seq` numbers every event of the ledger, from
 * 1, without gaps, in the order the moves were committed.
 *
 * @example
 * const event: LedgerEvent = { seq: 7, callId: 'call_1', session: 's1', from: 'awaiting_approval', to: 'executing', actor: 'user_42', at: 1767225600000 };
 */
export interface LedgerEvent {
  readonly seq: number;
  readonly callId: string;
  readonly session: string;
  readonly from: ToolCallStatus | null;
  readonly to: ToolCallStatus;
  /** The principal who made the move, or the gate's own name for moves it made itself. */
  readonly actor: string;
  readonly at: number;
  readonly reason?: EventReason;
}

/**
 * Why a call moved (the reason its record gives), or, on an event with `from === to`, why a request
 * about it was refused (`stale`, `forbidden`, `expired`, `id_conflict`, …) or that a recovery
 * re-ran it (`recovered`).
 *
 * @example
 * const reason: EventReason = { code: 'stale', message: 'the approval names other arguments than the call holds' };
 */
export type EventReason = Reason | { readonly code: RefusalCode | 'recovered'; readonly message: string };

/**
 * An event to append: everything but its number, which the ledger assigns.
 *
 * @example
 * const event: NewLedgerEvent = { callId: 'call_1', session: 's1', from: null, to: 'pending', actor: 'user_42', at: Date.now() };
 */
export type NewLedgerEvent = Omit<LedgerEvent, 'seq'> & {
  /** The call's record right after the move, as JSON (what a live feed sends with the event). */
  readonly record?: string;
};

/**
 * Options both ledgers take.
 *
 * @example
 * const options: LedgerOptions = { auditKey: process.env.TOOLGATE_AUDIT_KEY, onError: (error) => logger.error(error) };
 */
export interface LedgerOptions {
  /**
   * A secret that keys the chain (HMAC-SHA256 instead of SHA-256): someone who can write to the
   * database but does not hold the key cannot change an event and recompute the hashes after it.
   * A ledger written with a key must always be opened with the same key.
   */
  readonly auditKey?: string | Uint8Array;
  /**
   * How often to look for commits made by other processes, in milliseconds, while someone listens
   * with `onCommitted`. SQLite has no other way to hear of them (default 250); on PostgreSQL it is
   * only a safety net under LISTEN/NOTIFY (default 5000).
   */
  readonly pollMs?: number;
  /** Receives errors thrown by `onCommitted` listeners and by the live feed's connection. Default: `console.error`. */
  readonly onError?: (error: unknown) => void;
}

/**
 * Durable storage for a server gate: calls, approvals and a hash-chained event trail, on SQLite
 * (`sqliteLedger`) or PostgreSQL (`postgresLedger`), through one Kysely query layer. Several gates
 * may share one ledger; `close()` closes the database.
 *
 * @example
 * const ledger = await sqliteLedger({ path: './toolgate.db' });
 * const result = await ledger.verify();
 * if (!result.ok) console.error(`audit trail broken at event ${result.seq}: ${result.why}`);
 * await ledger.close();
 */
export interface Ledger {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * The query layer, typed with the ledger's tables. Reads only, and never inside `transaction`
   * (use its `trx` there): every write goes through `transaction`, so that a move and its event
   * are committed together.
   *
   * @internal
   */
  readonly db: Kysely<LedgerDatabase>;
  /**
   * Runs a read through the query layer, outside any transaction, answering as `eventsAfter`
   * does: a database that cannot be used is a `LedgerError` (`ledger_unavailable`), not the
   * driver's own error. The server gate reads calls and sessions with it.
   *
   * @internal
   */
  readonly read: <T>(query: (db: Kysely<LedgerDatabase>) => Promise<T>) => Promise<T>;
  /**
   * Runs `work` in one transaction and commits it, or rolls everything back if it throws. A lock
   * or serialization conflict (SQLITE_BUSY, PostgreSQL's serialization_failure or deadlock) runs
   * `work` again, a few times, so `work` must not have effects outside the transaction. A database
   * that cannot be used answers a `LedgerError` with code `ledger_unavailable`; any other error
   * (thrown by `work`, or a constraint the query broke) is passed on unchanged. Inside `work`,
   * read and write through `trx` only: calling `transaction`, `eventsAfter` or `verify` there
   * throws, as on SQLite they would wait forever for the connection `work` holds.
   *
   * @internal
   */
  readonly transaction: <T>(work: (trx: Transaction<LedgerDatabase>) => Promise<T>) => Promise<T>;
  /**
   * Inside `transaction`: locks the chain head, gives the event the next `seq`, chains its hash to
   * the previous event's, stores it, and wakes `onCommitted` listeners once the transaction commits.
   *
   * @internal
   */
  readonly appendEvent: (trx: Transaction<LedgerDatabase>, event: NewLedgerEvent) => Promise<LedgerEvent>;
  /** `appendEvent` for several events of one transaction, in order, with one chain update. @internal */
  readonly appendEvents: (trx: Transaction<LedgerDatabase>, events: readonly NewLedgerEvent[]) => Promise<LedgerEvent[]>;
  /** Committed events with a `seq` above `after`, oldest first, at most `limit` (default 1000) of them. */
  readonly eventsAfter: (after: number, options?: { readonly session?: string; readonly limit?: number }) => Promise<LedgerEvent[]>;
  /** `eventsAfter`, each event with the record as it was right after it. @internal */
  readonly movesAfter: (after: number, options?: { readonly session?: string; readonly limit?: number }) => Promise<LedgerMove[]>;
  /** The `seq` of the last committed event (0 when there is none). */
  readonly head: () => Promise<number>;
  /**
   * A session's calls exactly as they stood at one `seq`, oldest first: each call's record as of
   * its last event up to that seq, read from the events themselves, so the snapshot and a feed that
   * follows from its seq neither miss nor repeat a move. @internal
   */
  readonly snapshot: (session: string) => Promise<{ seq: number; calls: ToolCallRecord[] }>;
  /**
   * Opens a transaction the caller commits or rolls back itself: a transactional tool writes its
   * rows in it while it runs, and the call's `committed` move joins it. Not retried: a conflict
   * fails the call's commit. On SQLite it holds the one connection until it ends. @internal
   */
  readonly begin: () => Promise<HeldTransaction>;
  /**
   * Calls `listener` soon after events are committed by this process or any other; the listener
   * then reads `eventsAfter(lastSeq)`. For a commit of this ledger object it is given what was
   * committed (the moves, in seq order), so a reader that has everything before them needs no read;
   * for another process's commit, the seq it reached when the database says (PostgreSQL), or
   * nothing. It may be woken when nothing new was committed (on PostgreSQL, also after the live
   * connection was re-established, as commits may have been missed meanwhile). Returns the function
   * that stops it.
   */
  readonly onCommitted: (listener: (committed?: Committed) => void) => () => void;
  /**
   * Walks the chain and names the first event that was changed, removed or inserted. When the
   * chain holds, `hash` is the last event's hash: kept somewhere else, it shows later whether
   * events were cut from the end, which the database alone cannot show.
   */
  readonly verify: () => Promise<Verification>;
  /** Waits for running transactions, stops the live feed and closes the database. */
  readonly close: () => Promise<void>;
}

/**
 * A transaction held open across a tool's run; see `Ledger.begin`.
 *
 * @example
 * const held = await ledger.begin();
 * try { await work(held.trx); await held.commit(); } catch (error) { await held.rollback(); throw error; }
 */
export interface HeldTransaction {
  readonly trx: Transaction<LedgerDatabase>;
  readonly commit: () => Promise<void>;
  readonly rollback: () => Promise<void>;
}

/**
 * What a dialect provides to the ledger: its query layer, how it hears of other processes'
 * commits, how it reads its driver's errors, and how it closes.
 *
 * @example
 * const ledger = await openLedger({ dialect: 'sqlite', db, watch, failure, close }, options);
 */
export interface LedgerBackend {
  readonly dialect: 'sqlite' | 'postgres';
  readonly db: Kysely<LedgerDatabase>;
  /** Starts listening for other processes' commits, calling `wake` for each; returns the stop. */
  readonly watch: (wake: (seq?: number) => void) => () => void;
  readonly failure: (error: unknown) => Failure | undefined;
  readonly close: () => Promise<void>;
}

/** The PostgreSQL channel an append notifies, with its `seq` as the payload. */
export const NOTIFY_CHANNEL = 'toolgate_events';

const ATTEMPTS = 5;
const DEFAULT_LIMIT = 1000;

/**
 * Applies the migrations, then builds the ledger over a dialect's backend. Closes the backend
 * and throws if the database cannot be used.
 *
 * @example
 * return openLedger(backend, options);
 */
export async function openLedger(backend: LedgerBackend, options: LedgerOptions): Promise<Ledger> {
  const { db, dialect } = backend;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const hasher = chainHasher(options.auditKey);

  try {
    await migrate(backend);
    const head = await db.selectFrom('toolgate_chain').select(['last_seq', 'algorithm']).where('id', '=', 1).executeTakeFirstOrThrow();
    if (head.last_seq > 0 && head.algorithm !== hasher.algorithm) {
      throw new Error(
        hasher.algorithm === 'sha256'
          ? 'This ledger’s audit chain is keyed (HMAC-SHA256): open it with the auditKey it was written with.'
          : 'This ledger’s audit chain was written without an auditKey: open it without one, or start a new ledger to key its chain.',
      );
    }
  } catch (error) {
    await backend.close().catch(() => undefined);
    throw asLedgerError(backend, error, 'opening');
  }

  // The transactions that are open right now, each with whether it appended an event.
  const open = new WeakMap<Transaction<LedgerDatabase>, TransactionState>();
  // Which transaction the code running now is part of, to refuse a second one inside it: on SQLite
  // it would wait forever for the connection the first one holds.
  const within = new AsyncLocalStorage<{ running: boolean }>();
  const refusal = (what: string): Error | undefined => {
    if (closing) return closedLedger();
    if (within.getStore()?.running) {
      return new Error(`${what} was called inside ledger.transaction(...): use the transaction you were given (on SQLite, the two would wait for each other forever).`);
    }
    return undefined;
  };
  const inflight = new Set<Promise<unknown>>();
  const listeners = new Set<{ readonly listener: (committed?: Committed) => void }>();
  let stopWatching: (() => void) | undefined;
  let closing: Promise<void> | undefined;

  const wake = (committed?: Committed) => {
    for (const { listener } of [...listeners]) {
      try {
        listener(committed);
      } catch (error) {
        onError(error);
      }
    }
  };

  const track = <T>(promise: Promise<T>): Promise<T> => {
    inflight.add(promise);
    const settle = () => inflight.delete(promise);
    promise.then(settle, settle);
    return promise;
  };

  const read = <T>(what: string, query: () => Promise<T>): Promise<T> => {
    const refused = refusal(what);
    if (refused) return Promise.reject(refused);
    return track(
      query().catch((error: unknown) => {
        throw asLedgerError(backend, error, 'reading');
      }),
    );
  };

  const transaction = <T>(work: (trx: Transaction<LedgerDatabase>) => Promise<T>): Promise<T> => {
    const refused = refusal('ledger.transaction');
    if (refused) return Promise.reject(refused);
    return track(
      (async () => {
        for (let attempt = 1; ; attempt += 1) {
          const state: TransactionState = { appended: false, head: undefined, moves: [] };
          try {
            const result = await db.transaction().execute(async (trx) => {
              open.set(trx, state);
              const context = { running: true };
              try {
                return await within.run(context, () => work(trx));
              } finally {
                context.running = false;
                open.delete(trx);
              }
            });
            if (state.appended) {
              knownHead = state.head;
              wake(state.moves);
            }
            return result;
          } catch (error) {
            const failure = backend.failure(error);
            if (failure?.kind === 'retry' && attempt < ATTEMPTS) {
              await delay(2 ** attempt * (5 + Math.random() * 5));
              continue;
            }
            throw failure ? unavailable(failure, error, 'writing') : error;
          }
        }
      })(),
    );
  };

  // The chain head as this ledger object last committed it. An append that finds it still current
  // needs no read of its own: one guarded UPDATE both checks it and locks the head. Another writer
  // (a process, an app server) moves the head on; the guard then fails and the head is read.
  let knownHead: Head | undefined;

  const appendEvents = async (trx: Transaction<LedgerDatabase>, events: readonly NewLedgerEvent[]): Promise<LedgerEvent[]> => {
    const state = open.get(trx);
    if (!state) throw new Error('appendEvent must be given the transaction that ledger.transaction(...) is running.');
    for (const event of events) {
      if (!Number.isSafeInteger(event.at)) throw new TypeError(`An event's \`at\` must be milliseconds since the epoch (got ${String(event.at)}).`);
    }
    if (events.length === 0) return [];
    // Every append locks the one chain-head row until its transaction commits, so the next `seq`
    // is handed out only after the previous one is committed: seq order is commit order, across
    // connections, processes and app servers. With a sequence (bigserial) instead, a transaction
    // could take 5, another 6 and commit first; a reader that saw 6 and moved on would never see
    // 5. SQLite needs no row lock: its write transactions (BEGIN IMMEDIATE) already run one at a time.
    const chain = (rows: readonly EventsTable[]) => {
      const last = rows[rows.length - 1] as EventsTable;
      const update = trx.updateTable('toolgate_chain').set({ last_seq: last.seq, last_hash: last.hash, algorithm: hasher.algorithm }).where('id', '=', 1);
      return { last, update };
    };
    // Delivered to every listening connection when (and only if) the transaction commits.
    const notify = (seq: number) => sql<string>`pg_notify(${NOTIFY_CHANNEL}, ${String(seq)})`.as('notified');
    let rows: EventsTable[] | undefined;
    let inserted = false;
    const guess = state.head ?? knownHead;
    if (guess !== undefined) {
      const candidate = chainRows(guess, events, hasher);
      const { last, update } = chain(candidate);
      const guarded = update
        .where('last_seq', '=', guess.seq)
        .where('last_hash', '=', guess.hash)
        .where((eb) => eb.or([eb('algorithm', '=', hasher.algorithm), eb('algorithm', 'is', null)]));
      if (dialect === 'postgres') {
        // One statement on PostgreSQL: the guarded head update, and the events inserted only if it
        // took (a data-modifying WITH; SQLite has none, and needs no round trip to save).
        const result = await trx
          .with('chained', () => guarded.returning(notify(last.seq)))
          .insertInto('toolgate_events')
          .columns(EVENT_COLUMNS)
          .expression(sql`select * from (values ${sql.join(candidate.map(eventValues))}) as v where exists (select 1 from chained)`)
          .executeTakeFirst();
        if (Number(result.numInsertedOrUpdatedRows ?? 0) === candidate.length) {
          rows = candidate;
          inserted = true;
        }
      } else if (Number((await guarded.executeTakeFirst()).numUpdatedRows) === 1) rows = candidate;
    }
    if (rows === undefined) {
      let lock = trx.selectFrom('toolgate_chain').select(['last_seq', 'last_hash', 'algorithm']).where('id', '=', 1);
      if (dialect === 'postgres') lock = lock.forUpdate();
      const head = await lock.executeTakeFirstOrThrow();
      if (head.algorithm !== null && head.algorithm !== hasher.algorithm) {
        throw new Error(`This ledger’s audit chain is hashed with ${head.algorithm}; this ledger object was opened for ${hasher.algorithm}.`);
      }
      rows = chainRows({ seq: head.last_seq, hash: head.last_hash }, events, hasher);
      const { last, update } = chain(rows);
      if (dialect === 'postgres') await update.returning(notify(last.seq)).execute();
      else await update.execute();
    }
    if (!inserted) await trx.insertInto('toolgate_events').values(rows).execute();
    const last = rows[rows.length - 1] as EventsTable;
    state.appended = true;
    state.head = { seq: last.seq, hash: last.hash };
    const appended = rows.map(toEvent);
    rows.forEach((row, index) => {
      if (row.record !== null) state.moves.push({ event: appended[index] as LedgerEvent, record: readRecord(row.record) });
      else state.moves.length = 0; // a gap a reader would notice: let it read instead
    });
    return appended;
  };

  const appendEvent = async (trx: Transaction<LedgerDatabase>, event: NewLedgerEvent): Promise<LedgerEvent> =>
    (await appendEvents(trx, [event]))[0] as LedgerEvent;

  const eventsAfter = (after: number, { session, limit = DEFAULT_LIMIT }: { readonly session?: string; readonly limit?: number } = {}) =>
    read('ledger.eventsAfter', async () => {
      let query = db.selectFrom('toolgate_events').selectAll().where('seq', '>', after);
      if (session !== undefined) query = query.where('session', '=', session);
      const rows = await query.orderBy('seq').limit(limit).execute();
      return rows.map(toEvent);
    });

  const movesAfter = (after: number, { session, limit = DEFAULT_LIMIT }: { readonly session?: string; readonly limit?: number } = {}) =>
    read('ledger.movesAfter', async () => {
      let query = db.selectFrom('toolgate_events').selectAll().where('seq', '>', after).where('record', 'is not', null);
      if (session !== undefined) query = query.where('session', '=', session);
      const rows = await query.orderBy('seq').limit(limit).execute();
      return rows.map((row) => ({ event: toEvent(row), record: readRecord(row.record as string) }));
    });

  const readHead = () => db.selectFrom('toolgate_chain').select('last_seq').where('id', '=', 1).executeTakeFirstOrThrow();
  const head = () => read('ledger.head', async () => (await readHead()).last_seq);

  const snapshot = (session: string) =>
    read('ledger.snapshot', async () => {
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

  const begin = async (): Promise<HeldTransaction> => {
    const refused = refusal('ledger.begin');
    if (refused) throw refused;
    let held: ControlledTransaction<LedgerDatabase>;
    try {
      held = await db.startTransaction().execute();
    } catch (error) {
      const failure = backend.failure(error);
      throw failure ? unavailable(failure, error, 'writing') : error;
    }
    const state: TransactionState = { appended: false, head: undefined, moves: [] };
    open.set(held, state);
    let ending: Promise<void> | undefined;
    const end = (how: 'commit' | 'rollback') =>
      (ending ??= track(
        (async () => {
          open.delete(held);
          try {
            await (how === 'commit' ? held.commit() : held.rollback()).execute();
          } catch (error) {
            if (how === 'commit') await held.rollback().execute().catch(() => undefined);
            const failure = backend.failure(error);
            throw failure ? unavailable(failure, error, 'writing') : error;
          }
          if (how === 'commit' && state.appended) {
            knownHead = state.head;
            wake(state.moves);
          }
        })(),
      ));
    return { trx: held, commit: () => end('commit'), rollback: () => end('rollback') };
  };

  const verify = () =>
    read('ledger.verify', () =>
      verifyChain(
        {
          after: (seq, limit) => db.selectFrom('toolgate_events').selectAll().where('seq', '>', seq).orderBy('seq').limit(limit).execute(),
          head: () => db.selectFrom('toolgate_chain').select(['last_seq', 'last_hash', 'algorithm']).where('id', '=', 1).executeTakeFirstOrThrow(),
        },
        hasher,
      ),
    );

  const onCommitted = (listener: (committed?: Committed) => void) => {
    const entry = { listener };
    if (closing) return () => undefined;
    listeners.add(entry);
    stopWatching ??= backend.watch((seq) => wake(seq));
    return () => {
      if (!listeners.delete(entry) || listeners.size > 0) return;
      stopWatching?.();
      stopWatching = undefined;
    };
  };

  const close = () => {
    closing ??= (async () => {
      listeners.clear();
      stopWatching?.();
      stopWatching = undefined;
      await Promise.allSettled([...inflight]);
      await backend.close();
    })();
    return closing;
  };

  const readWith = <T>(query: (db: Kysely<LedgerDatabase>) => Promise<T>) => read('ledger.read', () => query(db));

  return { dialect, db, read: readWith, transaction, appendEvent, appendEvents, eventsAfter, movesAfter, head, snapshot, begin, onCommitted, verify, close };
}

async function migrate({ db }: LedgerBackend): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
    migrationTableName: 'toolgate_migrations',
    migrationLockTableName: 'toolgate_migration_lock',
  });
  const { error } = await migrator.migrateToLatest();
  if (error !== undefined) throw error;
}

function asLedgerError(backend: LedgerBackend, error: unknown, when: 'opening' | 'reading' | 'writing'): unknown {
  const failure = backend.failure(error);
  return failure ? unavailable(failure, error, when) : error;
}

function toEvent(row: EventsTable): LedgerEvent {
  const event = { seq: row.seq, callId: row.call_id, session: row.session, from: row.from_status, to: row.to_status, actor: row.actor, at: row.at };
  return row.reason === null ? event : { ...event, reason: JSON.parse(row.reason) as EventReason };
}

/** The last event of the chain: its seq and hash. */
interface Head {
  readonly seq: number;
  readonly hash: string;
}

/** What the ledger knows of a transaction it runs: whether it appended, the head it left, and its moves. */
interface TransactionState {
  appended: boolean;
  head: Head | undefined;
  moves: LedgerMove[];
}

/**
 * What an `onCommitted` listener is told: the moves this ledger object committed, in seq order,
 * or the seq another process reached (PostgreSQL's notification), or nothing.
 *
 * @example
 * ledger.onCommitted((committed) => (Array.isArray(committed) ? deliver(committed) : readNew()));
 */
export type Committed = readonly LedgerMove[] | number;

const EVENT_COLUMNS = ['seq', 'call_id', 'session', 'from_status', 'to_status', 'actor', 'at', 'reason', 'record', 'prev_hash', 'hash'] as const;

/** One event as a row of a VALUES list, in `EVENT_COLUMNS` order, typed for PostgreSQL. */
function eventValues(row: EventsTable) {
  return sql`(${row.seq}::bigint, ${row.call_id}, ${row.session}, ${row.from_status}::text, ${row.to_status}, ${row.actor}, ${row.at}::bigint, ${row.reason}::text, ${row.record}::text, ${row.prev_hash}, ${row.hash})`;
}

/** The rows for `events`, numbered and hashed after `head`. */
function chainRows(head: Head, events: readonly NewLedgerEvent[], hasher: ChainHasher): EventsTable[] {
  let previous = head;
  return events.map((event) => {
    const row: EventsTable = {
      seq: previous.seq + 1,
      call_id: event.callId,
      session: event.session,
      from_status: event.from,
      to_status: event.to,
      actor: event.actor,
      at: event.at,
      reason: event.reason === undefined ? null : JSON.stringify(event.reason),
      record: event.record ?? null,
      prev_hash: previous.hash,
      hash: '',
    };
    row.hash = hasher.hash(row.prev_hash, row);
    previous = { seq: row.seq, hash: row.hash };
    return row;
  });
}
