// What both dialects' chains share: what an appender is, the rows chained after a head, the head
// as read under the chain, and what a chained transaction records in its state.
import type { Transaction, UpdateQueryBuilder, UpdateResult } from 'kysely';
import type { ToolCallRecord } from '@toolgate/core';
import type { LedgerEvent, LedgerMove, NewLedgerEvent } from '../ledger.ts';
import type { EventsTable, LedgerDatabase } from '../schema.ts';
import { readRecord } from '../stored-record.ts';
import { toEvent } from '../event-rows.ts';
import { chainedIn, type Head, type TransactionState } from '../transactions.ts';
import type { RowWrite } from '../statements.ts';
import type { ChainHasher } from './chain.ts';

/**
 * Appends events to the chain inside a transaction the ledger runs. Each dialect has its own
 * (`createSqliteChain`, `createPostgresChain`); the ledger picks one when it opens.
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
  /**
   * Writes a call's row and, only if the write changed it, records the move's events as `record`
   * does. Answers how many rows the write changed. On PostgreSQL the two are one statement, and an
   * event whose record is the text the row is written with is given it there, not sent again.
   */
  readonly recordWith: (
    trx: Transaction<LedgerDatabase>,
    write: RowWrite,
    events: readonly NewLedgerEvent[],
  ) => Promise<number>;
  /** PostgreSQL: takes the chain and chains up to `limit` pending events, oldest first; answers how many. */
  readonly sequence: (trx: Transaction<LedgerDatabase>, limit: number) => Promise<number>;
  /** A transaction that chained has committed: the head it left is the one to expect next. */
  readonly committed: (state: TransactionState) => void;
}

/**
 * What an appender needs: the hasher, and the state of the transaction it is given.
 *
 * @example
 * const options: ChainOptions = { hasher: chainHasher(undefined), stateOf: transactions.stateOf };
 */
export interface ChainOptions {
  readonly hasher: ChainHasher;
  readonly stateOf: (trx: Transaction<LedgerDatabase>) => TransactionState | undefined;
  /** The head as read when the ledger opened: the first append tries it without reading. */
  readonly head?: Head;
}

/**
 * The chain head as this ledger object last committed it. An append that finds it still current
 * needs no read of its own: one guarded UPDATE both checks it and moves it on. Another writer (a
 * process, an app server) moves the head on; the guard then fails and the head is read.
 *
 * @example
 * const heads = createKnownHead(stateOf);
 * const state = heads.stateFor(trx, events);
 * const guess = heads.guess(state);
 */
export interface KnownHead {
  /** The transaction's state, once the events are checked; throws for a transaction the ledger does not run. */
  readonly stateFor: (
    trx: Transaction<LedgerDatabase>,
    events: readonly NewLedgerEvent[],
  ) => TransactionState;
  /** The head to try appending after without reading it, if there is one to try. */
  readonly guess: (state: TransactionState) => Head | undefined;
  readonly committed: (state: TransactionState) => void;
}

/**
 * Builds the known head over the ledger's transaction states.
 *
 * @example
 * const heads = createKnownHead(transactions.stateOf, openedAt);
 */
export function createKnownHead(stateOf: ChainOptions['stateOf'], opened?: Head): KnownHead {
  // Without a head to try, a PostgreSQL move would leave its events pending for the sequencer.
  let known = opened;
  return {
    stateFor(trx, events) {
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
    },
    guess: (state) => (state.pending ? undefined : (state.head ?? known)),
    committed(state) {
      if (state.head !== undefined) known = state.head;
    },
  };
}

/**
 * Records rows just chained in the transaction's state, and answers them as events.
 *
 * @example
 * return chained(state, rows);
 */
export function chained(state: TransactionState, rows: readonly EventsTable[]): LedgerEvent[] {
  const last = rows[rows.length - 1] as EventsTable;
  const appended = rows.map(toEvent);
  const moves: LedgerMove[] = [];
  const notes: LedgerEvent[] = [];
  rows.forEach((row, index) => {
    const event = appended[index] as LedgerEvent;
    if (row.record === null) notes.push(event);
    else moves.push(lazyMove(event, row.record));
  });
  chainedIn(state, { seq: last.seq, hash: last.hash }, moves, notes);
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

/**
 * The UPDATE that moves the head on to the last of `rows`.
 *
 * @example
 * const { last, update } = headUpdate(trx, rows, hasher);
 * await update.execute();
 */
export function headUpdate(
  trx: Transaction<LedgerDatabase>,
  rows: readonly EventsTable[],
  hasher: ChainHasher,
): {
  readonly last: EventsTable;
  readonly update: UpdateQueryBuilder<LedgerDatabase, 'toolgate_chain', 'toolgate_chain', UpdateResult>;
} {
  const last = rows[rows.length - 1] as EventsTable;
  const update = trx
    .updateTable('toolgate_chain')
    .set({ last_seq: last.seq, last_hash: last.hash, algorithm: hasher.algorithm })
    .where('id', '=', 1);
  return { last, update };
}

/**
 * Reads the chain's head (to be called holding the chain), refusing a chain hashed with another
 * algorithm than this ledger object's.
 *
 * @example
 * const head = await readHead(trx, hasher);
 */
export async function readHead(trx: Transaction<LedgerDatabase>, hasher: ChainHasher): Promise<Head> {
  const head = await trx
    .selectFrom('toolgate_chain')
    .select(['last_seq', 'last_hash', 'algorithm'])
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  if (head.algorithm !== null && head.algorithm !== hasher.algorithm) {
    throw new Error(
      `This ledger’s audit chain is hashed with ${head.algorithm}; this ledger object was opened for ${hasher.algorithm}.`,
    );
  }
  return { seq: head.last_seq, hash: head.last_hash };
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
