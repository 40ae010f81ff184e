import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Released migrations are never edited: a database that ran this one keeps what it made. Change
// the schema with a new numbered migration instead.

/**
 * Fewer b-trees written by each move. Every index a row is in is one more page written to the log
 * at each commit that changes it, so:
 *
 * - On SQLite, `toolgate_events.seq` becomes the table's rowid (an `integer primary key`): the
 *   table was a rowid table with a separate index on `seq`, both written for every event. The
 *   table is rebuilt with its rows, which keep their numbers and hashes.
 * - `toolgate_calls_session` goes: no query reads calls by session (a session's calls are read
 *   through its events).
 * - `toolgate_calls_lease` holds only calls with a lease (those running here or elsewhere), the
 *   only ones a recovery looks for: a call that ends leaves it instead of moving within it.
 *
 * @example
 * const provider = { getMigrations: async () => ({ '0010-lighter-writes': lighterWrites }) };
 */
export const lighterWrites = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) await eventsByRowid(db);
    await db.schema.dropIndex('toolgate_calls_session').execute();
    await db.schema.dropIndex('toolgate_calls_lease').execute();
    await db.schema
      .createIndex('toolgate_calls_lease')
      .on('toolgate_calls')
      .columns(['status', 'lease_expires_at'])
      .where(sql.ref('lease_expires_at'), 'is not', null)
      .execute();
  },
};

const EVENT_COLUMNS = sql.raw(
  '"seq", "call_id", "session", "from_status", "to_status", "actor", "at", "reason", "record", "prev_hash", "hash"',
);

/** SQLite: rebuilds `toolgate_events` with `seq` as its rowid, rows and indexes as they were. */
async function eventsByRowid(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('toolgate_events_by_seq')
    // Exactly `integer primary key`: SQLite makes that column the rowid (`bigint primary key` is a
    // column with an index of its own).
    .addColumn('seq', 'integer', (col) => col.primaryKey())
    .addColumn('call_id', 'text', (col) => col.notNull())
    .addColumn('session', 'text', (col) => col.notNull())
    .addColumn('from_status', 'text')
    .addColumn('to_status', 'text', (col) => col.notNull())
    .addColumn('actor', 'text', (col) => col.notNull())
    .addColumn('at', 'bigint', (col) => col.notNull())
    .addColumn('reason', 'text')
    .addColumn('record', 'text')
    .addColumn('prev_hash', 'text', (col) => col.notNull())
    .addColumn('hash', 'text', (col) => col.notNull())
    .execute();
  await sql`insert into "toolgate_events_by_seq" (${EVENT_COLUMNS}) select ${EVENT_COLUMNS} from "toolgate_events" order by "seq"`.execute(
    db,
  );
  await db.schema.dropTable('toolgate_events').execute();
  await db.schema.alterTable('toolgate_events_by_seq').renameTo('toolgate_events').execute();
  // Every index of a rowid table ends with the rowid: these are ordered by seq as they were.
  await db.schema.createIndex('toolgate_events_session').on('toolgate_events').column('session').execute();
  await db.schema.createIndex('toolgate_events_call').on('toolgate_events').column('call_id').execute();
}
