import type { Ledger } from '@toolgate/server';
import type { LedgerDatabase } from '@toolgate/server/schema';
import { sql, type Kysely, type Transaction } from 'kysely';

/** One row per conversation: its shop, as the server keeps it (the authority for money). */
export interface ShopsTable {
  session: string;
  /** The `ShopState` as JSON. */
  state: string;
}

/** One row per conversation: who it belongs to, how it runs, and what was said. */
export interface ChatsTable {
  id: string;
  principal: string;
  created_at: number;
  /** `realistic` or `instant`. */
  pace: string;
  /** `scripted` or `remote`. */
  mode: string;
  /** The transcript entries, as JSON. */
  entries: string;
  /** The messages sent to the model, as JSON. */
  messages: string;
  /** A reply the continuation guard held back, as JSON, or null. */
  held: string | null;
  /** The calls of an assistant turn whose answers the model is still owed, as JSON, or null. */
  waiting: string | null;
}

/** Which conversation each visitor has open. */
export interface VisitorsTable {
  principal: string;
  chat: string;
}

/** The playground's own tables, beside the ledger's in the same SQLite file. */
// A type, not an interface: Kysely's `withTables` wants a record type.
export type PlaygroundTables = {
  playground_shops: ShopsTable;
  playground_chats: ChatsTable;
  playground_visitors: VisitorsTable;
};

export type PlaygroundDatabase = LedgerDatabase & PlaygroundTables;

/**
 * The playground's tables live in the ledger's database, so that a transactional tool's write to
 * the shop and the call's `committed` record are one SQLite transaction.
 */
export interface PlaygroundDb {
  /** Reads (never inside `write`: use its transaction there). */
  readonly db: Kysely<PlaygroundDatabase>;
  /** One transaction of the playground's own (it may run again on a lock conflict: no effects outside it). */
  readonly write: <T>(work: (trx: Transaction<PlaygroundDatabase>) => Promise<T>) => Promise<T>;
}

/** Creates the playground's tables if they are not there yet, and returns typed access to them. */
export async function openPlaygroundDb(ledger: Ledger): Promise<PlaygroundDb> {
  const db = ledger.db.withTables<PlaygroundTables>();
  await ledger.transaction(async (trx) => {
    await sql`create table if not exists playground_shops (session text primary key, state text not null)`.execute(
      trx,
    );
    await sql`create table if not exists playground_chats (
      id text primary key, principal text not null, created_at integer not null, pace text not null, mode text not null,
      entries text not null, messages text not null, held text, waiting text)`.execute(trx);
    await sql`create table if not exists playground_visitors (principal text primary key, chat text not null)`.execute(
      trx,
    );
  });
  return {
    db,
    write: (work) => ledger.transaction((trx) => work(trx.withTables<PlaygroundTables>())),
  };
}
