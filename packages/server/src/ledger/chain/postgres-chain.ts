// PostgreSQL's chain. Whoever extends the chain holds a transaction-scoped advisory lock until it
// commits: one chainer at a time, so seq order is commit order (a reader that saw seq 6 never
// misses a 5 committed later). A move never waits for it: it tries it, and when it is taken it
// leaves its events pending for the sequencer.
import { sql, type Transaction } from 'kysely';
import { NOTIFY_CHANNEL, type EventReason, type NewLedgerEvent } from '../ledger.ts';
import type { EventsTable, LedgerDatabase, PendingTable } from '../schema.ts';
import {
  EVENT_COLUMNS,
  eventRowValues,
  quoted,
  run,
  shaped,
  statement,
  type Statement,
} from '../statements.ts';
import {
  headReadIn,
  leftPendingIn,
  pendingChainedIn,
  type Head,
  type TransactionState,
} from '../transactions.ts';
import type { ChainHasher } from './chain.ts';
import {
  chained,
  chainRows,
  createKnownHead,
  headUpdate,
  readHead,
  type ChainAppender,
  type ChainOptions,
} from './chain-rows.ts';

const CHAIN_LOCK = 0x746f6f6c6761; // 'toolga', within a JS number's exact range

/** How many pending events one sequencer transaction chains at most. */
export const BATCH = 500;

/**
 * The appender of a ledger on PostgreSQL.
 *
 * @example
 * const chain = createPostgresChain({ hasher, stateOf: transactions.stateOf });
 */
export function createPostgresChain({ hasher, stateOf }: ChainOptions): ChainAppender {
  const heads = createKnownHead(stateOf);
  return {
    async append(trx, events) {
      const state = heads.stateFor(trx, events);
      if (events.length === 0) return [];
      const guess = heads.guess(state);
      let rows = guess === undefined ? undefined : await tryChain(trx, hasher, guess, events, false);
      if (rows === undefined) {
        // Behind the lock, whatever is pending goes first (a call's earlier move may be among it).
        while ((await sequence(trx, state, hasher, BATCH)) === BATCH);
        pendingChainedIn(state); // chained above, this transaction's own among them
        rows = await afterHead(trx, hasher, events);
      }
      return chained(state, rows);
    },
    async record(trx, events) {
      const state = heads.stateFor(trx, events);
      if (events.length === 0) return;
      const guess = heads.guess(state);
      const rows = guess === undefined ? undefined : await tryChain(trx, hasher, guess, events, true);
      if (rows !== undefined) {
        chained(state, rows);
        return;
      }
      if (guess === undefined)
        await trx.insertInto('toolgate_pending').values(events.map(pendingRow)).execute();
      leftPendingIn(state);
    },
    sequence: (trx, limit) => sequence(trx, heads.stateFor(trx, []), hasher, limit),
    committed: heads.committed,
  };
}

/**
 * In one statement: if the chain lock is free, nothing is pending and the head is the one
 * guessed, the head moves on and the events are chained. Otherwise nothing is written, or, with
 * `orPending`, the events are left pending instead, all without waiting for anyone.
 */
async function tryChain(
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
 * The one statement of {@link tryChain}, for `count` events (kept per count and kind). Its values:
 * each event's columns (sent once: a pending row is the same event without its place in the
 * chain), then the new head (seq, hash, algorithm), the guessed head (seq, hash) and the algorithm
 * again, the lock, the channel and the notified seq.
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

/** Reads the head (holding the chain lock) and chains the rows after it. */
async function afterHead(
  trx: Transaction<LedgerDatabase>,
  hasher: ChainHasher,
  events: readonly NewLedgerEvent[],
): Promise<EventsTable[]> {
  const rows = chainRows(await readHead(trx, hasher), events, hasher);
  const { last, update } = headUpdate(trx, rows, hasher);
  await update.returning(notify(last.seq)).execute();
  await trx.insertInto('toolgate_events').values(rows).execute();
  return rows;
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
  const head = await readHead(trx, hasher);
  const waiting = await trx.selectFrom('toolgate_pending').selectAll().orderBy('id').limit(limit).execute();
  if (waiting.length === 0) {
    headReadIn(state, head);
    return 0;
  }
  const rows = chainRows(head, waiting.map(pendingEvent), hasher);
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
      where id = 1 and last_seq = ${head.seq} returning ${notify(last.seq)}
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
