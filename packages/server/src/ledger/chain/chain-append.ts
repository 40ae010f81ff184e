import { sql, type Transaction } from 'kysely';
import type { ChainHasher } from './chain.ts';
import type { ToolCallRecord } from '@toolgate/core';
import {
  NOTIFY_CHANNEL,
  type EventReason,
  type LedgerEvent,
  type LedgerMove,
  type NewLedgerEvent,
} from '../ledger.ts';
import type { EventsTable, LedgerDatabase, PendingTable } from '../schema.ts';
import {
  changed,
  EVENT_COLUMNS,
  eventRowValues,
  GUARDED_HEAD,
  insertEvents,
  quoted,
  run,
  shaped,
  statement,
  type Statement,
} from '../statements.ts';
import { readRecord } from '../stored-record.ts';
import { toEvent } from '../event-rows.ts';
import type { Head, TransactionState } from '../transactions.ts';

/**
 * Appends events to the chain inside a transaction the ledger runs.
 *
 * @example
 * const chain = createChainAppender({ dialect: 'sqlite', hasher, stateOf });
 * await chain.append(trx, [event]);
 */
export interface ChainAppender {
  /** Chains the events now, waiting for the chain if another transaction holds it, and answers them numbered. */
  readonly append: (
    trx: Transaction<LedgerDatabase>,
    events: readonly NewLedgerEvent[],
  ) => Promise<LedgerEvent[]>;
  /**
   * Records the events with the transaction's move: chained now when the chain is free (and always
   * on SQLite), else left pending, without waiting, for the sequencer to chain once this commits.
   */
  readonly record: (trx: Transaction<LedgerDatabase>, events: readonly NewLedgerEvent[]) => Promise<void>;
  /** PostgreSQL: takes the chain and chains up to `limit` pending events, oldest first; answers how many. */
  readonly sequence: (trx: Transaction<LedgerDatabase>, limit: number) => Promise<number>;
  /** A transaction that chained has committed: the head it left is the one to expect next. */
  readonly committed: (state: TransactionState) => void;
}

/**
 * What the appender needs: the dialect (PostgreSQL appends in one statement), the hasher, and the
 * state of the transaction it is given.
 *
 * @example
 * const options: ChainAppenderOptions = { dialect: 'postgres', hasher: chainHasher(undefined), stateOf: transactions.stateOf };
 */
export interface ChainAppenderOptions {
  readonly dialect: 'sqlite' | 'postgres';
  readonly hasher: ChainHasher;
  readonly stateOf: (trx: Transaction<LedgerDatabase>) => TransactionState | undefined;
}

// On PostgreSQL whoever extends the chain holds this transaction-scoped advisory lock until it
// commits: one chainer at a time, so seq order is commit order (a reader that saw seq 6 never
// misses a 5 committed later). A move never waits for it: it tries it, and when it is taken it
// leaves its event pending. SQLite needs no lock: its write transactions already run one at a time.
const CHAIN_LOCK = 0x746f6f6c6761; // 'toolga', within a JS number's exact range

/**
 * Builds the appender.
 *
 * @example
 * const chain = createChainAppender(options);
 */
export function createChainAppender({ dialect, hasher, stateOf }: ChainAppenderOptions): ChainAppender {
  // The chain head as this ledger object last committed it. An append that finds it still current
  // needs no read of its own: one guarded UPDATE both checks it and moves it on. Another writer
  // (a process, an app server) moves the head on; the guard then fails and the head is read.
  let knownHead: Head | undefined;

  const stateFor = (
    trx: Transaction<LedgerDatabase>,
    events: readonly NewLedgerEvent[],
  ): TransactionState => {
    const state = stateOf(trx);
    if (!state)
      throw new Error('appendEvent must be given the transaction that ledger.transaction(...) is running.');
    for (const event of events) {
      if (!Number.isSafeInteger(event.at))
        throw new TypeError(
          `An event's \`at\` must be milliseconds since the epoch (got ${String(event.at)}).`,
        );
    }
    return state;
  };

  const append = async (
    trx: Transaction<LedgerDatabase>,
    events: readonly NewLedgerEvent[],
  ): Promise<LedgerEvent[]> => {
    const state = stateFor(trx, events);
    if (events.length === 0) return [];
    const guess = state.pending ? undefined : (state.head ?? knownHead);
    let rows: EventsTable[] | undefined;
    if (guess !== undefined)
      rows =
        dialect === 'postgres'
          ? await pgTryChain(trx, hasher, guess, events, false)
          : await sqliteAfterGuess(trx, hasher, guess, events);
    if (rows === undefined) {
      // Behind the lock, whatever is pending goes first (a call's earlier move may be among it).
      if (dialect === 'postgres') {
        while ((await sequence(trx, state, hasher, BATCH)) === BATCH);
        state.pending = false; // chained above, this transaction's own among them
      }
      rows = await appendAfterHead(trx, hasher, dialect, events);
    }
    return chained(state, rows);
  };

  const record = async (
    trx: Transaction<LedgerDatabase>,
    events: readonly NewLedgerEvent[],
  ): Promise<void> => {
    if (dialect === 'sqlite') {
      await append(trx, events);
      return;
    }
    const state = stateFor(trx, events);
    if (events.length === 0) return;
    const guess = state.pending ? undefined : (state.head ?? knownHead);
    const rows = guess === undefined ? undefined : await pgTryChain(trx, hasher, guess, events, true);
    if (rows !== undefined) {
      chained(state, rows);
      return;
    }
    if (guess === undefined)
      await trx.insertInto('toolgate_pending').values(events.map(pendingRow)).execute();
    state.appended = true;
    state.pending = true;
  };

  return {
    append,
    record,
    sequence: (trx, limit) => sequence(trx, stateFor(trx, []), hasher, limit),
    committed(state) {
      if (state.head !== undefined) knownHead = state.head;
    },
  };
}

function chained(state: TransactionState, rows: readonly EventsTable[]): LedgerEvent[] {
  const last = rows[rows.length - 1] as EventsTable;
  state.appended = true;
  state.head = { seq: last.seq, hash: last.hash };
  const appended = rows.map(toEvent);
  rows.forEach((row, index) => {
    if (row.record !== null) state.moves.push(lazyMove(appended[index] as LedgerEvent, row.record));
    else state.moves.length = 0; // a gap a reader would notice: let it read instead
  });
  return appended;
}

/**
 * A move whose record is read from its stored text when first asked for: a listener that only
 * looks at the event (the gate's follower, for most moves) costs no parse.
 */
function lazyMove(event: LedgerEvent, text: string): LedgerMove {
  let record: ToolCallRecord | undefined;
  return {
    event,
    get record() {
      return (record ??= readRecord(text));
    },
  };
}

const headUpdate = (trx: Transaction<LedgerDatabase>, rows: readonly EventsTable[], hasher: ChainHasher) => {
  const last = rows[rows.length - 1] as EventsTable;
  const update = trx
    .updateTable('toolgate_chain')
    .set({ last_seq: last.seq, last_hash: last.hash, algorithm: hasher.algorithm })
    .where('id', '=', 1);
  return { last, update };
};

/** SQLite: the rows chained after the head this ledger expects, if the head is still that one. */
async function sqliteAfterGuess(
  trx: Transaction<LedgerDatabase>,
  hasher: ChainHasher,
  guess: Head,
  events: readonly NewLedgerEvent[],
): Promise<EventsTable[] | undefined> {
  const candidate = chainRows(guess, events, hasher);
  const last = candidate[candidate.length - 1] as EventsTable;
  const moved = await run(trx, 'sqlite', GUARDED_HEAD, [
    last.seq,
    last.hash,
    hasher.algorithm,
    guess.seq,
    guess.hash,
    hasher.algorithm,
  ]);
  if (changed(moved) !== 1) return undefined;
  await run(trx, 'sqlite', insertEvents(candidate.length), candidate.flatMap(eventRowValues));
  return candidate;
}

/**
 * PostgreSQL, in one statement: if the chain lock is free, nothing is pending and the head is the
 * one guessed, the head moves on and the events are chained. Otherwise nothing is written, or,
 * with `orPending`, the events are left pending instead, all without waiting for anyone.
 */
async function pgTryChain(
  trx: Transaction<LedgerDatabase>,
  hasher: ChainHasher,
  guess: Head,
  events: readonly NewLedgerEvent[],
  orPending: boolean,
): Promise<EventsTable[] | undefined> {
  const candidate = chainRows(guess, events, hasher);
  const last = candidate[candidate.length - 1] as EventsTable;
  const values: unknown[] = candidate.flatMap(eventRowValues);
  values.push(
    last.seq,
    last.hash,
    hasher.algorithm,
    guess.seq,
    guess.hash,
    hasher.algorithm,
    CHAIN_LOCK,
    NOTIFY_CHANNEL,
    String(last.seq),
  );
  const { rows } = await run<{ chained: number }>(
    trx,
    'postgres',
    tryChainStatement(candidate.length, orPending),
    values,
  );
  return rows[0]?.chained === candidate.length ? candidate : undefined;
}

const tryChains = new Map<string, Statement>();

/**
 * PostgreSQL's one statement for {@link pgTryChain}, for `count` events (kept per count and kind).
 * Its values: each event's columns (sent once: a pending row is the same event without its place
 * in the chain), then the new head (seq, hash, algorithm), the guessed head (seq, hash) and the
 * algorithm again, the lock, the channel and the notified seq.
 */
function tryChainStatement(count: number, orPending: boolean): Statement {
  return shaped(tryChains, `${count}:${orPending}`, () => {
    const eventRow = '(?::bigint, ?, ?, ?::text, ?, ?, ?::bigint, ?::text, ?::text, ?, ?)';
    const pending = orPending
      ? `, pending as (insert into toolgate_pending (${quoted(PENDING_COLUMNS)}) select ${quoted(PENDING_COLUMNS)} from v where not exists (select 1 from chained) order by seq returning 1)`
      : '';
    return statement(`
    with v (${quoted(EVENT_COLUMNS)}) as (values ${Array.from({ length: count }, () => eventRow).join(', ')}),
    chained as (
      update toolgate_chain set last_seq = ?, last_hash = ?, algorithm = ?
      where id = 1 and last_seq = ? and last_hash = ? and (algorithm = ? or algorithm is null)
        and not exists (select 1 from toolgate_pending) and pg_try_advisory_xact_lock(?)
      returning pg_notify(?, ?) as notified
    ), inline as (
      insert into toolgate_events (${quoted(EVENT_COLUMNS)})
      select ${quoted(EVENT_COLUMNS)} from v where exists (select 1 from chained) order by seq returning 1
    )${pending}
    select (select count(*) from inline)::int as chained`);
  });
}

/** Reads the head (holding the chain: on PostgreSQL its lock, on SQLite the write lock) and chains the rows after it. */
async function appendAfterHead(
  trx: Transaction<LedgerDatabase>,
  hasher: ChainHasher,
  dialect: 'sqlite' | 'postgres',
  events: readonly NewLedgerEvent[],
): Promise<EventsTable[]> {
  const head = await trx
    .selectFrom('toolgate_chain')
    .select(['last_seq', 'last_hash', 'algorithm'])
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  checkAlgorithm(head.algorithm, hasher);
  const rows = chainRows({ seq: head.last_seq, hash: head.last_hash }, events, hasher);
  const { last, update } = headUpdate(trx, rows, hasher);
  if (dialect === 'postgres') await update.returning(notify(last.seq)).execute();
  else await update.execute();
  await trx.insertInto('toolgate_events').values(rows).execute();
  return rows;
}

function checkAlgorithm(algorithm: string | null, hasher: ChainHasher): void {
  if (algorithm !== null && algorithm !== hasher.algorithm) {
    throw new Error(
      `This ledger’s audit chain is hashed with ${algorithm}; this ledger object was opened for ${hasher.algorithm}.`,
    );
  }
}

/** Waits for the chain lock, then moves the oldest pending events onto the chain, in one statement. */
async function sequence(
  trx: Transaction<LedgerDatabase>,
  state: TransactionState,
  hasher: ChainHasher,
  limit: number,
): Promise<number> {
  // Its own statement: a statement that waited for the lock would read with the snapshot it took
  // before, and could chain again what the previous holder just chained.
  await sql`select pg_advisory_xact_lock(${CHAIN_LOCK})`.execute(trx);
  const head = await trx
    .selectFrom('toolgate_chain')
    .select(['last_seq', 'last_hash', 'algorithm'])
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  checkAlgorithm(head.algorithm, hasher);
  const waiting = await trx.selectFrom('toolgate_pending').selectAll().orderBy('id').limit(limit).execute();
  if (waiting.length === 0) {
    state.head ??= { seq: head.last_seq, hash: head.last_hash };
    return 0;
  }
  const rows = chainRows({ seq: head.last_seq, hash: head.last_hash }, waiting.map(pendingEvent), hasher);
  const last = rows[rows.length - 1] as EventsTable;
  // The pending rows move onto the chain inside PostgreSQL: only each one's place (seq, hashes)
  // and its reason as hashed are sent, not its record again. The rest is copied from the rows this
  // statement deletes, which are the rows read above: they never change, and the lock is held.
  const places = rows.map(
    (row, index) =>
      sql`(${waiting[index]?.id}::bigint, ${row.seq}::bigint, ${row.reason}::text, ${row.prev_hash}, ${row.hash})`,
  );
  const { rows: done } = await sql<{ chained: number }>`
    with chained as (
      update toolgate_chain set last_seq = ${last.seq}, last_hash = ${last.hash}, algorithm = ${hasher.algorithm}
      where id = 1 and last_seq = ${head.last_seq} returning ${notify(last.seq)}
    ), taken as (
      delete from toolgate_pending where id = any(${waiting.map((row) => row.id)}::bigint[]) and exists (select 1 from chained) returning *
    ), inline as (
      insert into toolgate_events (${sql.join(EVENT_COLUMNS.map((c) => sql.ref(c)))})
      select p.seq, t.call_id, t.session, t.from_status, t.to_status, t.actor, t.at, p.reason, t.record, p.prev_hash, p.hash
      from taken t join (values ${sql.join(places)}) as p (id, seq, reason, prev_hash, hash) on p.id = t.id
      order by p.seq returning 1
    )
    select (select count(*) from inline)::int as chained`.execute(trx);
  if (done[0]?.chained !== rows.length)
    throw new Error(
      'The audit chain’s head moved while the sequencer held it: something else writes to toolgate_chain.',
    );
  chained(state, rows);
  return rows.length;
}

/** How many pending events one sequencer transaction chains at most. */
export const BATCH = 500;

/** Delivered to every listening connection when (and only if) the transaction commits. */
const notify = (seq: number) => sql<string>`pg_notify(${NOTIFY_CHANNEL}, ${String(seq)})`.as('notified');

const PENDING_COLUMNS = [
  'call_id',
  'session',
  'from_status',
  'to_status',
  'actor',
  'at',
  'reason',
  'record',
] as const;

type PendingRow = Omit<PendingTable, 'id'>;

function pendingRow(event: NewLedgerEvent): PendingRow {
  return {
    call_id: event.callId,
    session: event.session,
    from_status: event.from,
    to_status: event.to,
    actor: event.actor,
    at: event.at,
    reason: event.reason === undefined ? null : JSON.stringify(event.reason),
    record: event.record ?? null,
  };
}

function pendingEvent(row: Omit<PendingTable, 'id'> & { id: number }): NewLedgerEvent {
  const event = {
    callId: row.call_id,
    session: row.session,
    from: row.from_status,
    to: row.to_status,
    actor: row.actor,
    at: Number(row.at),
  };
  const withReason =
    row.reason === null ? event : { ...event, reason: JSON.parse(row.reason) as EventReason };
  return row.record === null ? withReason : { ...withReason, record: row.record };
}

/**
 * The rows for `events`, numbered and hashed after `head`.
 *
 * @example
 * const rows = chainRows({ seq: 0, hash: GENESIS_HASH }, [event], chainHasher(undefined));
 */
export function chainRows(head: Head, events: readonly NewLedgerEvent[], hasher: ChainHasher): EventsTable[] {
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
