// SQLite's chain: its write transactions already run one at a time, so a move always chains its
// events at once and nothing is ever left pending.
import type { Transaction } from 'kysely';
import type { LedgerEvent, NewLedgerEvent } from '../ledger.ts';
import type { EventsTable, LedgerDatabase } from '../schema.ts';
import {
  changed,
  EVENT_COLUMNS,
  eventRowValues,
  quoted,
  run,
  shaped,
  statement,
  type Statement,
} from '../statements.ts';
import type { Head } from '../transactions.ts';
import type { ChainHasher } from './chain.ts';
import {
  chained,
  chainRows,
  createKnownHead,
  readHead,
  type ChainAppender,
  type ChainOptions,
} from './chain-rows.ts';

const HEAD_MOVED = 'toolgate: the chain head is not the one this event follows';
const APPEND_COLUMNS = [...EVENT_COLUMNS, 'algorithm'] as const;

/**
 * What a SQLite ledger's connection runs once as it opens: a view of its own connection (`temp`),
 * whose rows are inserted into `toolgate_events` with the chain head moved on to each, in the same
 * statement, if the head is still the one the row follows (its seq and hash, hashed as this ledger
 * hashes). So an append is one statement instead of the head's update and the events' insert; and
 * only the ledger's own appends move the head: a row inserted into `toolgate_events` by anything
 * else (another connection, or `ledger.db`) leaves the head where it was, for `verify()` to find.
 *
 * @example
 * database.exec(SQLITE_CHAIN_APPEND);
 */
export const SQLITE_CHAIN_APPEND = `
create temp view "toolgate_chain_append" (${quoted(APPEND_COLUMNS)}) as
  select ${APPEND_COLUMNS.map(() => 'null').join(', ')} where 0;
create temp trigger "toolgate_chain_append_row" instead of insert on "toolgate_chain_append"
begin
  select raise(abort, '${HEAD_MOVED}') where not exists (
    select 1 from "toolgate_chain" where "id" = 1 and "last_seq" = new."seq" - 1
      and "last_hash" = new."prev_hash" and ("algorithm" = new."algorithm" or "algorithm" is null));
  insert into "toolgate_events" (${quoted(EVENT_COLUMNS)})
    values (${EVENT_COLUMNS.map((column) => `new."${column}"`).join(', ')});
  update "toolgate_chain" set "last_seq" = new."seq", "last_hash" = new."hash", "algorithm" = new."algorithm"
    where "id" = 1;
end;`;

const appends = new Map<number, Statement>();

/** The append of `count` rows through the view (kept per count: a move chains one, a first write a few). */
function appendRows(count: number): Statement {
  const row = `(${APPEND_COLUMNS.map(() => '?').join(', ')})`;
  return shaped(appends, count, () =>
    statement(
      `insert into "toolgate_chain_append" (${quoted(APPEND_COLUMNS)}) values ${Array.from({ length: count }, () => row).join(', ')}`,
    ),
  );
}

/** Appends `rows`; false, having written nothing, when the head is not the one the first follows. */
async function appended(
  trx: Transaction<LedgerDatabase>,
  hasher: ChainHasher,
  rows: readonly EventsTable[],
): Promise<boolean> {
  try {
    await run(
      trx,
      'sqlite',
      appendRows(rows.length),
      rows.flatMap((row) => [...eventRowValues(row), hasher.algorithm]),
    );
    return true;
  } catch (error) {
    // The statement is undone whole (ABORT); the transaction goes on.
    if (
      (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_TRIGGER' &&
      String(error).includes(HEAD_MOVED)
    )
      return false;
    throw error;
  }
}

/**
 * The appender of a ledger on SQLite.
 *
 * @example
 * const chain = createSqliteChain({ hasher, stateOf: transactions.stateOf });
 */
export function createSqliteChain({ hasher, stateOf, head }: ChainOptions): ChainAppender {
  const heads = createKnownHead(stateOf, head);
  const append = async (
    trx: Transaction<LedgerDatabase>,
    events: readonly NewLedgerEvent[],
  ): Promise<LedgerEvent[]> => {
    const state = heads.stateFor(trx, events);
    if (events.length === 0) return [];
    const guess = heads.guess(state);
    const rows =
      (guess === undefined ? undefined : await afterGuess(trx, hasher, guess, events)) ??
      (await afterHead(trx, hasher, events));
    return chained(state, rows);
  };
  return {
    append,
    record: async (trx, events) => {
      await append(trx, events);
    },
    // In process, a value is not sent anywhere: the row and its events are written one after the other.
    async recordWith(trx, write, events) {
      const written = changed(await run(trx, 'sqlite', write.statement, write.values));
      if (written > 0) await append(trx, events);
      return written;
    },
    // Nothing is pending on SQLite.
    sequence: (trx) => {
      heads.stateFor(trx, []);
      return Promise.resolve(0);
    },
    committed: heads.committed,
  };
}

/** The rows chained after the head this ledger expects, if the head is still that one. */
async function afterGuess(
  trx: Transaction<LedgerDatabase>,
  hasher: ChainHasher,
  guess: Head,
  events: readonly NewLedgerEvent[],
): Promise<EventsTable[] | undefined> {
  const candidate = chainRows(guess, events, hasher);
  return (await appended(trx, hasher, candidate)) ? candidate : undefined;
}

/** Reads the head (the transaction holds SQLite's write lock) and chains the rows after it. */
async function afterHead(
  trx: Transaction<LedgerDatabase>,
  hasher: ChainHasher,
  events: readonly NewLedgerEvent[],
): Promise<EventsTable[]> {
  const rows = chainRows(await readHead(trx, hasher), events, hasher);
  if (!(await appended(trx, hasher, rows)))
    throw new Error('The chain head moved while this transaction held the write lock.');
  return rows;
}
