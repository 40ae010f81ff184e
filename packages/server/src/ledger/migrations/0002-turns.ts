import type { Kysely } from 'kysely';

// Released migrations are never edited: a database that ran this one keeps what it made. Change
// the schema with a new numbered migration instead.

/**
 * Turns: the calls one stream reader read, and the claim on running `onTurnSettled` for them once
 * each has ended (a lease with a fencing token, like a call's).
 *
 * @example
 * const provider = { getMigrations: async () => ({ '0001-initial': initial, '0002-turns': turns }) };
 */
export const turns = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('toolgate_turns')
      .addColumn('session', 'text', (col) => col.notNull())
      .addColumn('id', 'text', (col) => col.notNull())
      .addColumn('principal', 'text', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('done_at', 'bigint')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('fence', 'integer', (col) => col.notNull().defaultTo(0))
      .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('toolgate_turns_pk', ['session', 'id'])
      .execute();
    await db.schema
      .createIndex('toolgate_turns_open')
      .on('toolgate_turns')
      .columns(['done_at', 'lease_expires_at'])
      .execute();

    await db.schema
      .createTable('toolgate_turn_calls')
      .addColumn('session', 'text', (col) => col.notNull())
      .addColumn('turn_id', 'text', (col) => col.notNull())
      .addColumn('position', 'integer', (col) => col.notNull())
      .addColumn('call_id', 'text', (col) => col.notNull())
      .addColumn('answer', 'text')
      .addPrimaryKeyConstraint('toolgate_turn_calls_pk', ['session', 'turn_id', 'position'])
      .execute();
    await db.schema
      .createIndex('toolgate_turn_calls_call')
      .on('toolgate_turn_calls')
      .column('call_id')
      .execute();
  },
};
