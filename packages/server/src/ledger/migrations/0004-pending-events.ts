import { PostgresAdapter, type Kysely } from 'kysely';

// Released migrations are never edited: a database that ran this one keeps what it made. Change
// the schema with a new numbered migration instead.

/**
 * Events committed with their move but not chained yet: on PostgreSQL a move that finds the chain
 * busy leaves its event here, and the sequencer chains it after the move commits. `id` orders them
 * (a call's later move is always written after its earlier one committed, so it gets a larger id).
 *
 * @example
 * const provider = { getMigrations: async () => ({ '0004-pending-events': pendingEvents }) };
 */
export const pendingEvents = {
  async up(db: Kysely<unknown>): Promise<void> {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    await db.schema
      .createTable('toolgate_pending')
      // An integer primary key is SQLite's rowid, which grows like PostgreSQL's bigserial.
      .addColumn('id', postgres ? 'bigserial' : 'integer', (col) => col.primaryKey())
      .addColumn('call_id', 'text', (col) => col.notNull())
      .addColumn('session', 'text', (col) => col.notNull())
      .addColumn('from_status', 'text')
      .addColumn('to_status', 'text', (col) => col.notNull())
      .addColumn('actor', 'text', (col) => col.notNull())
      .addColumn('at', 'bigint', (col) => col.notNull())
      .addColumn('reason', 'text')
      .addColumn('record', 'text')
      .execute();
  },
};
