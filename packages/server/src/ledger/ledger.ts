import type { Reason, ToolCallRecord, ToolCallStatus } from '@toolgate/core';
import type { Kysely, Transaction } from 'kysely';
import type { RefusalCode } from '../decision/decision.ts';
import type { ChannelReason } from '../decision/channel-reason.ts';
import type { Verification, VerifyOptions } from './chain/chain.ts';
import type { RowWrite } from './statements.ts';
import type { Failure } from './error.ts';
import type { LedgerDatabase } from './schema.ts';

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
 * about it was refused (`stale`, `forbidden`, `expired`, `id_conflict`, …), that a recovery
 * re-ran it (`recovered`), that one of several approvers approved it (`approved`), that a person
 * edited its input (`edited`), what a shadow budget would have refused (`budget_exceeded`), or
 * what became of an outcome nobody saw ({@link OutcomeNote}), or a vote a channel refused
 * ({@link ChannelReason}: with the channel, and the principal and outside user it came from).
 *
 * @example
 * const reason: EventReason = { code: 'stale', message: 'the approval names other arguments than the call holds' };
 */
export type EventReason =
  | Reason
  | {
      readonly code: RefusalCode | 'recovered' | 'approved' | 'edited' | OutcomeNote | WaitNote;
      readonly message: string;
    }
  | ChannelReason;

/**
 * Notes about outcomes nobody saw, on events that move no status: a running call held in doubt
 * (`held`) or run again after its effect was found not to have happened (`run_again`), a person's
 * settling of a held call (`resolved`), and a committed call's compensation asked for or ended
 * (`compensation`).
 *
 * @example
 * const code: OutcomeNote = 'held';
 */
export type OutcomeNote = 'held' | 'run_again' | 'resolved' | 'compensation';

/**
 * Notes about a call waiting for a person, on events that move no status: those still asked were
 * reminded (`reminded`), more principals were asked (`escalated`), or could not be
 * (`escalation_failed`); a notice of the call was delivered through a channel (`notice_delivered`)
 * or that channel failed to take it (`notice_failed`).
 *
 * @example
 * const code: WaitNote = 'escalated';
 */
export type WaitNote = 'reminded' | 'escalated' | 'escalation_failed' | 'notice_delivered' | 'notice_failed';

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
   * only a safety net under LISTEN/NOTIFY (default 5000). A SQLite ledger also looks this often
   * whether its file was moved or replaced.
   */
  readonly pollMs?: number;
  /** Receives errors thrown by `onCommitted` listeners and by the live feed's connection, and a SQLite file found moved. Default: `console.error`. */
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
   * read and write through `trx` only: on SQLite, `transaction`, `eventsAfter` or `verify` called
   * there would wait forever for the connection `work` holds. App code that `work` awaits runs in
   * `inApp`, where they throw instead.
   *
   * @internal
   */
  readonly transaction: <T>(work: (trx: Transaction<LedgerDatabase>) => Promise<T>) => Promise<T>;
  /**
   * Runs app code that a transaction awaits (a tool's `approvers`): a transaction or read it
   * starts, itself or through the gate, throws at once instead of waiting forever for the
   * connection the transaction holds. Only such code is tracked, as tracking puts a hook on every
   * promise of the process; the gate's own work passes its `trx`. @internal
   */
  readonly inApp: <T>(code: () => Promise<T>) => Promise<T>;
  /**
   * Inside `transaction`: takes the chain (waiting for whoever holds it), gives the event the next
   * `seq`, chains its hash to the previous event's, stores it, and wakes `onCommitted` listeners
   * once the transaction commits.
   *
   * @internal
   */
  readonly appendEvent: (trx: Transaction<LedgerDatabase>, event: NewLedgerEvent) => Promise<LedgerEvent>;
  /**
   * Inside `transaction`: records the move's events. Chained at once when the chain is free (and
   * always on SQLite); on PostgreSQL, when another transaction holds the chain, left pending without
   * waiting, and chained right after this transaction commits. What a move writes. @internal
   */
  readonly recordEvents: (
    trx: Transaction<LedgerDatabase>,
    events: readonly NewLedgerEvent[],
  ) => Promise<void>;
  /**
   * Inside `transaction`: writes a call's row, and, only if the write changed it, records the
   * move's events as `recordEvents` does; answers how many rows the write changed. On PostgreSQL
   * the row and its events go in one statement, and the record goes over the wire once: each event
   * that holds the record the row is written with is given it inside PostgreSQL. @internal
   */
  readonly recordWith: (
    trx: Transaction<LedgerDatabase>,
    write: RowWrite,
    events: readonly NewLedgerEvent[],
  ) => Promise<number>;
  /** `appendEvent` for several events of one transaction, in order, with one chain update. @internal */
  readonly appendEvents: (
    trx: Transaction<LedgerDatabase>,
    events: readonly NewLedgerEvent[],
  ) => Promise<LedgerEvent[]>;
  /** Committed events with a `seq` above `after`, oldest first, at most `limit` (default 1000) of them. */
  readonly eventsAfter: (
    after: number,
    options?: { readonly session?: string; readonly limit?: number },
  ) => Promise<LedgerEvent[]>;
  /** `eventsAfter`, each event with the record as it was right after it. @internal */
  readonly movesAfter: (
    after: number,
    options?: { readonly session?: string; readonly limit?: number },
  ) => Promise<LedgerMove[]>;
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
   *
   * A commit that chained events holding no record (a refusal, a notice's delivery) is given as the
   * moves after the last of them; `own` then has every event it chained (@internal).
   */
  readonly onCommitted: (listener: (committed?: Committed, own?: OwnCommit) => void) => () => void;
  /**
   * Walks the chain and names the first event that was changed, removed or inserted, then the
   * first call whose row no longer holds what its last event holds, a page at a time (no query and
   * no memory grows with the ledger). When the chain holds, `hash` is the last event's hash: kept
   * somewhere else, it shows later whether events were cut from the end, which the database alone
   * cannot show. Given such a result as `from`, it checks that event is still there and unchanged,
   * and walks only the events after it (the call rows are all checked); `onProgress` hears of each
   * page.
   */
  readonly verify: (options?: VerifyOptions) => Promise<Verification>;
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
  /** How many transactions may run at once (default: no bound), so that writers waiting on the chain head leave connections for reads. */
  readonly writers?: number;
  /**
   * How long a transaction that finds the database locked by another connection is tried again,
   * in milliseconds (default: a few quick attempts). SQLite's own busy wait would block the event
   * loop; the ledger waits with timers instead.
   */
  readonly lockWaitMs?: number;
}

/**
 * One move of the ledger with the record as it was right after it: what the live feed sends, so
 * that a browser can show the call and, on `committed`, apply the output to its own store.
 *
 * @example
 * for await (const { event, record } of serverGate.moves(session, { principal, after: 0 })) send(event.seq, record);
 */
export interface LedgerMove {
  readonly event: LedgerEvent;
  readonly record: ToolCallRecord;
}

/**
 * What an `onCommitted` listener is told: the moves this ledger object committed, in seq order,
 * or the seq another process reached (PostgreSQL's notification), or nothing.
 *
 * @example
 * ledger.onCommitted((committed) => (Array.isArray(committed) ? deliver(committed) : readNew()));
 */
export type Committed = readonly LedgerMove[] | number;

/**
 * Every event one commit of this ledger object chained: those holding a record (its moves) and
 * those holding none (its notes), each in seq order; together, a run of seqs without a gap.
 *
 * @internal
 * @example
 * ledger.onCommitted((committed, own) => own?.notes.forEach((event) => audit(event)));
 */
export interface OwnCommit {
  readonly moves: readonly LedgerMove[];
  readonly notes: readonly LedgerEvent[];
}

/** The PostgreSQL channel an append notifies, with its `seq` as the payload. */
export const NOTIFY_CHANNEL = 'toolgate_events';

/**
 * The part of a `pg.Pool` the ledger uses, so that the ledger's types do not need `@types/pg`.
 * A `pg.Pool` is one.
 *
 * @example
 * const pool: PostgresLedgerPool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
 */
export interface PostgresLedgerPool {
  connect(): Promise<PostgresLedgerClient>;
}

/**
 * The part of a `pg` pool client the ledger uses.
 *
 * @example
 * const client: PostgresLedgerClient = await pool.connect();
 */
export interface PostgresLedgerClient {
  /** `name` is set for the ledger's own statements, which are prepared once per connection (pg's named statements). */
  query(config: {
    name?: string;
    text: string;
    values?: unknown[];
    types?: PostgresTypes;
    query_timeout?: number;
  }): Promise<{ command: string; rowCount: number | null; rows: unknown[] }>;
  release(destroy?: boolean): void;
  on(
    event: 'notification',
    listener: (message: { channel: string; payload?: string | undefined }) => void,
  ): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * How `pg` parses a column of a given type, per query.
 *
 * @example
 * const types: PostgresTypes = { getTypeParser: (oid) => (oid === 20 ? Number : String) };
 */
export interface PostgresTypes {
  getTypeParser(oid: number, format?: 'text'): (value: string) => unknown;
}
