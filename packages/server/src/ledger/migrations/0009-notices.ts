import type { Kysely } from 'kysely';

// Released migrations are never edited: a database that ran this one keeps what it made. Change
// the schema with a new numbered migration instead.

/**
 * Notices to the people a call asks, one row per notice and channel: written in the transaction
 * that moves the call (or fires its timer), delivered by whichever process claims the row (a lease
 * with a fencing token), retried with backoff until the channel takes it; `ref` is what the
 * channel answered, for updating what it showed.
 *
 * @example
 * const provider = { getMigrations: async () => ({ '0009-notices': notices }) };
 */
export const notices = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('toolgate_notices')
      .addColumn('id', 'text', (col) => col.notNull())
      .addColumn('channel', 'text', (col) => col.notNull())
      .addColumn('call_id', 'text', (col) => col.notNull())
      .addColumn('session', 'text', (col) => col.notNull())
      .addColumn('kind', 'text', (col) => col.notNull())
      .addColumn('principal', 'text', (col) => col.notNull())
      .addColumn('from_principal', 'text', (col) => col.notNull())
      .addColumn('from_on_behalf_of', 'text')
      .addColumn('record', 'text', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('rank', 'integer', (col) => col.notNull())
      .addColumn('due_at', 'bigint', (col) => col.notNull())
      .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
      .addColumn('delivered_at', 'bigint')
      .addColumn('ref', 'text')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('fence', 'integer', (col) => col.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('toolgate_notices_pk', ['id', 'channel'])
      .execute();
    await db.schema
      .createIndex('toolgate_notices_due')
      .on('toolgate_notices')
      .columns(['delivered_at', 'due_at'])
      .execute();
    await db.schema
      .createIndex('toolgate_notices_of_call')
      .on('toolgate_notices')
      .columns(['call_id', 'principal', 'channel'])
      .execute();
  },
};
