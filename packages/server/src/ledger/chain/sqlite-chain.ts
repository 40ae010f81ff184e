// SQLite's chain: its write transactions already run one at a time, so a move always chains its
// events at once and nothing is ever left pending.
import type { Transaction } from 'kysely';
import type { LedgerEvent, NewLedgerEvent } from '../ledger.ts';
import type { EventsTable, LedgerDatabase } from '../schema.ts';
import { changed, eventRowValues, GUARDED_HEAD, insertEvents, run } from '../statements.ts';
import type { Head } from '../transactions.ts';
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

/** Reads the head (the transaction holds SQLite's write lock) and chains the rows after it. */
async function afterHead(
  trx: Transaction<LedgerDatabase>,
  hasher: ChainHasher,
  events: readonly NewLedgerEvent[],
): Promise<EventsTable[]> {
  const rows = chainRows(await readHead(trx, hasher), events, hasher);
  await headUpdate(trx, rows, hasher).update.execute();
  await trx.insertInto('toolgate_events').values(rows).execute();
  return rows;
}
