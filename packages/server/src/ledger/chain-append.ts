import { sql, type Transaction } from 'kysely';
import type { ChainHasher } from './chain.ts';
import { NOTIFY_CHANNEL, type LedgerEvent, type NewLedgerEvent } from './ledger.ts';
import type { EventsTable, LedgerDatabase } from './schema.ts';
import { readRecord } from './stored-record.ts';
import { toEvent } from './event-rows.ts';
import type { Head, TransactionState } from './transactions.ts';

/**
 * Appends events to the chain inside a transaction the ledger runs.
 *
 * @example
 * const chain = createChainAppender({ dialect: 'sqlite', hasher, stateOf });
 * await chain.append(trx, [event]);
 */
export interface ChainAppender {
  readonly append: (trx: Transaction<LedgerDatabase>, events: readonly NewLedgerEvent[]) => Promise<LedgerEvent[]>;
  /** A transaction that appended has committed: the head it left is the one to expect next. */
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

/**
 * Builds the appender.
 *
 * @example
 * const chain = createChainAppender(options);
 */
export function createChainAppender({ dialect, hasher, stateOf }: ChainAppenderOptions): ChainAppender {
  // The chain head as this ledger object last committed it. An append that finds it still current
  // needs no read of its own: one guarded UPDATE both checks it and locks the head. Another writer
  // (a process, an app server) moves the head on; the guard then fails and the head is read.
  let knownHead: Head | undefined;

  const append = async (trx: Transaction<LedgerDatabase>, events: readonly NewLedgerEvent[]): Promise<LedgerEvent[]> => {
    const state = stateOf(trx);
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
    const guess = state.head ?? knownHead;
    const guessed = guess === undefined ? undefined : await appendAfterGuess(trx, guess, events);
    const rows = guessed?.rows ?? (await appendAfterHead(trx, events));
    if (guessed?.inserted !== true) await trx.insertInto('toolgate_events').values(rows).execute();
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

  const headUpdate = (trx: Transaction<LedgerDatabase>, rows: readonly EventsTable[]) => {
    const last = rows[rows.length - 1] as EventsTable;
    const update = trx.updateTable('toolgate_chain').set({ last_seq: last.seq, last_hash: last.hash, algorithm: hasher.algorithm }).where('id', '=', 1);
    return { last, update };
  };

  /** The rows chained after the head this ledger expects, if the head is still that one; `inserted` once they are stored. */
  async function appendAfterGuess(trx: Transaction<LedgerDatabase>, guess: Head, events: readonly NewLedgerEvent[]): Promise<{ rows: EventsTable[]; inserted: boolean } | undefined> {
    const candidate = chainRows(guess, events, hasher);
    const { last, update } = headUpdate(trx, candidate);
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
      return Number(result.numInsertedOrUpdatedRows ?? 0) === candidate.length ? { rows: candidate, inserted: true } : undefined;
    }
    return Number((await guarded.executeTakeFirst()).numUpdatedRows) === 1 ? { rows: candidate, inserted: false } : undefined;
  }

  /** Reads (and on PostgreSQL locks) the head, and chains the rows after it. */
  async function appendAfterHead(trx: Transaction<LedgerDatabase>, events: readonly NewLedgerEvent[]): Promise<EventsTable[]> {
    let lock = trx.selectFrom('toolgate_chain').select(['last_seq', 'last_hash', 'algorithm']).where('id', '=', 1);
    if (dialect === 'postgres') lock = lock.forUpdate();
    const head = await lock.executeTakeFirstOrThrow();
    if (head.algorithm !== null && head.algorithm !== hasher.algorithm) {
      throw new Error(`This ledger’s audit chain is hashed with ${head.algorithm}; this ledger object was opened for ${hasher.algorithm}.`);
    }
    const rows = chainRows({ seq: head.last_seq, hash: head.last_hash }, events, hasher);
    const { last, update } = headUpdate(trx, rows);
    if (dialect === 'postgres') await update.returning(notify(last.seq)).execute();
    else await update.execute();
    return rows;
  }

  return {
    append,
    committed(state) {
      knownHead = state.head;
    },
  };
}

/** Delivered to every listening connection when (and only if) the transaction commits. */
const notify = (seq: number) => sql<string>`pg_notify(${NOTIFY_CHANNEL}, ${String(seq)})`.as('notified');

const EVENT_COLUMNS = ['seq', 'call_id', 'session', 'from_status', 'to_status', 'actor', 'at', 'reason', 'record', 'prev_hash', 'hash'] as const;

/** One event as a row of a VALUES list, in `EVENT_COLUMNS` order, typed for PostgreSQL. */
function eventValues(row: EventsTable) {
  return sql`(${row.seq}::bigint, ${row.call_id}, ${row.session}, ${row.from_status}::text, ${row.to_status}, ${row.actor}, ${row.at}::bigint, ${row.reason}::text, ${row.record}::text, ${row.prev_hash}, ${row.hash})`;
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
