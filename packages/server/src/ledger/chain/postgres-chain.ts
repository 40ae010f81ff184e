// PostgreSQL's chain. Whoever extends the chain holds a transaction-scoped advisory lock until it
// commits: one chainer at a time, so seq order is commit order (a reader that saw seq 6 never
// misses a 5 committed later). A move never waits for it: it tries it, and when it is taken it
// leaves its events pending for the sequencer.
import { CompiledQuery, sql, type Transaction } from 'kysely';
import { NOTIFY_CHANNEL, type EventReason, type NewLedgerEvent } from '../ledger.ts';
import type { EventsTable, LedgerDatabase, PendingTable } from '../schema.ts';
import { changed, EVENT_COLUMNS, quoted, run, shaped, type RowWrite, type Statement } from '../statements.ts';
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
export function createPostgresChain({ hasher, stateOf, head }: ChainOptions): ChainAppender {
  const heads = createKnownHead(stateOf, head);
  return {
    async append(trx, events) {
      const state = heads.stateFor(trx, events);
      if (events.length === 0) return [];
      const guess = heads.guess(state);
      let rows = guess === undefined ? undefined : (await tryChain(trx, hasher, guess, events, false)).rows;
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
      const rows = guess === undefined ? undefined : (await tryChain(trx, hasher, guess, events, true)).rows;
      if (rows !== undefined) {
        chained(state, rows);
        return;
      }
      if (guess === undefined)
        await trx.insertInto('toolgate_pending').values(events.map(pendingRow)).execute();
      leftPendingIn(state);
    },
    async recordWith(trx, write, events) {
      const state = heads.stateFor(trx, events);
      const guess = heads.guess(state);
      if (guess === undefined || events.length === 0) {
        const written = changed(await run(trx, 'postgres', write.statement, write.values));
        if (written > 0 && events.length > 0) {
          await trx.insertInto('toolgate_pending').values(events.map(pendingRow)).execute();
          leftPendingIn(state);
        }
        return written;
      }
      const { rows, written } = await tryChain(trx, hasher, guess, events, true, write);
      if (written === 0) return 0;
      if (rows === undefined) leftPendingIn(state);
      else chained(state, rows);
      return written;
    },
    sequence: (trx, limit) => sequence(trx, heads.stateFor(trx, []), hasher, limit),
    committed: heads.committed,
  };
}

/**
 * In one statement: if the chain lock is free, nothing is pending and the head is the one
 * guessed, the head moves on and the events are chained. Otherwise nothing is written, or, with
 * `orPending`, the events are left pending instead, all without waiting for anyone. With a row
 * `write`, the statement writes the call's row first, and the events only if it changed the row;
 * an event whose record is a value of the write is given that value, not sent again. Answers the
 * rows chained (`undefined` when left pending or not written) and how many rows the write changed.
 */
async function tryChain(
  trx: Transaction<LedgerDatabase>,
  hasher: ChainHasher,
  guess: Head,
  events: readonly NewLedgerEvent[],
  orPending: boolean,
  write?: RowWrite,
): Promise<{ rows: EventsTable[] | undefined; written: number }> {
  const candidate = chainRows(guess, events, hasher);
  const last = candidate[candidate.length - 1] as EventsTable;
  const values: unknown[] = write === undefined ? [] : [...write.values];
  // Where each event's record is among the write's values (-1: sent with the event).
  const shared = candidate.map((row) =>
    write === undefined || row.record === null ? -1 : write.values.indexOf(row.record),
  );
  candidate.forEach((row, index) => {
    for (const column of EVENT_COLUMNS)
      if (column !== 'record' || shared[index] === -1) values.push(row[column]);
  });
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
  const text = tryChainText(write?.statement, shared, orPending);
  const { rows } = await trx.executeQuery<{ chained: number; written: number }>(
    CompiledQuery.raw(text, values),
  );
  const written = write === undefined ? 1 : (rows[0]?.written ?? 0);
  return { rows: rows[0]?.chained === candidate.length ? candidate : undefined, written };
}

const tryChains = new Map<Statement | undefined, Map<string, Statement>>();

/**
 * The text of {@link tryChain}'s statement (kept per write, count of events, shared records and
 * kind). Its values: the write's, then each event's columns but a shared record (sent once: a
 * pending row is the same event without its place in the chain), then the new head (seq, hash,
 * algorithm), the guessed head (seq, hash) and the algorithm again, the lock, the channel and the
 * notified seq.
 */
function tryChainText(write: Statement | undefined, shared: readonly number[], orPending: boolean): string {
  let forWrite = tryChains.get(write);
  if (forWrite === undefined) tryChains.set(write, (forWrite = new Map<string, Statement>()));
  return shaped(forWrite, `${shared.join(',')}:${orPending}`, () => {
    let n = write === undefined ? 0 : (write.postgres.match(/\$\d+/g)?.length ?? 0);
    const next = (cast = '') => `$${(n += 1)}${cast}`;
    const eventRows = shared.map((at) => {
      const [seq, callId, session, from, to, actor, when, reason] = [
        next('::bigint'),
        next(),
        next(),
        next('::text'),
        next(),
        next(),
        next('::bigint'),
        next('::text'),
      ];
      const record = at === -1 ? next('::text') : `$${at + 1}::text`;
      return `(${[seq, callId, session, from, to, actor, when, reason, record, next(), next()].join(', ')})`;
    });
    const [newSeq, newHash, algorithm, oldSeq, oldHash, algorithmAgain, lock, channel, notified] = Array.from(
      { length: 9 },
      () => next(),
    );
    const written = write === undefined ? '' : 'and exists (select 1 from w)';
    // Nothing pending, read from the key's index: the sequencer deletes every pending row it
    // chains, and until autovacuum comes by, a scan of the table reads each dead row on each move
    // (a hundred pages a move under load), where the index learns which entries are dead once.
    const nonePending = '(select min(id) from toolgate_pending) is null';
    const pending = orPending
      ? `, pending as (insert into toolgate_pending (${quoted(PENDING_COLUMNS)}) select ${quoted(PENDING_COLUMNS)} from v where not exists (select 1 from chained) ${written} order by seq returning 1)`
      : '';
    const text = `
    ${write === undefined ? 'with' : `with w as (${write.postgres} returning 1),`}
    v (${quoted(EVENT_COLUMNS)}) as (values ${eventRows.join(', ')}),
    chained as (
      update toolgate_chain set last_seq = ${newSeq}, last_hash = ${newHash}, algorithm = ${algorithm}
      where id = 1 and last_seq = ${oldSeq} and last_hash = ${oldHash} and (algorithm = ${algorithmAgain} or algorithm is null)
        ${written} and ${nonePending} and pg_try_advisory_xact_lock(${lock})
      returning pg_notify(${channel}, ${notified}) as notified
    ), inline as (
      insert into toolgate_events (${quoted(EVENT_COLUMNS)})
      select ${quoted(EVENT_COLUMNS)} from v where exists (select 1 from chained) order by seq returning 1
    )${pending}
    select (select count(*) from inline)::int as chained${write === undefined ? '' : ', (select count(*) from w)::int as written'}`;
    return { sqlite: '', postgres: text };
  }).postgres;
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
