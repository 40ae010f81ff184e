import type { Kysely } from 'kysely';

// Released migrations are never edited: a database that ran this one keeps what it made. Change
// the schema with a new numbered migration instead.

/**
 * Calls, approvals, sessions, the event chain and its head.
 *
 * @example
 * const provider = { getMigrations: async () => ({ '0001-initial': initial }) };
 */
export const initial = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('toolgate_calls')
      .addColumn('id', 'text', (col) => col.primaryKey())
      .addColumn('session', 'text', (col) => col.notNull())
      .addColumn('owner', 'text', (col) => col.notNull())
      .addColumn('tool', 'text', (col) => col.notNull())
      .addColumn('proposal_hash', 'text', (col) => col.notNull())
      .addColumn('input_hash', 'text')
      .addColumn('input', 'text')
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('version', 'integer', (col) => col.notNull().defaultTo(0))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('fence', 'integer', (col) => col.notNull().defaultTo(0))
      .addColumn('idempotency_key', 'text', (col) => col.notNull())
      .addColumn('output', 'text')
      .addColumn('reason', 'text')
      .addColumn('record', 'text', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .addColumn('updated_at', 'bigint', (col) => col.notNull())
      .execute();
    await db.schema
      .createIndex('toolgate_calls_session')
      .on('toolgate_calls')
      .columns(['session', 'created_at'])
      .execute();
    await db.schema
      .createIndex('toolgate_calls_lease')
      .on('toolgate_calls')
      .columns(['status', 'lease_expires_at'])
      .execute();

    await db.schema
      .createTable('toolgate_approvals')
      .addColumn('call_id', 'text', (col) => col.primaryKey().references('toolgate_calls.id'))
      .addColumn('session', 'text', (col) => col.notNull())
      .addColumn('input_hash', 'text', (col) => col.notNull())
      .addColumn('requested_at', 'bigint', (col) => col.notNull())
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .addColumn('decision', 'text')
      .addColumn('approver', 'text')
      .addColumn('decided_at', 'bigint')
      .addColumn('consumed', 'integer', (col) => col.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('toolgate_approvals_session')
      .on('toolgate_approvals')
      .column('session')
      .execute();
    await db.schema
      .createIndex('toolgate_approvals_expiry')
      .on('toolgate_approvals')
      .columns(['decision', 'expires_at'])
      .execute();

    // No foreign key to toolgate_calls: a refusal names the call id it was asked about, which may
    // not exist (an approval for an unknown id is refused and audited all the same).
    await db.schema
      .createTable('toolgate_events')
      .addColumn('seq', 'bigint', (col) => col.primaryKey())
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
    await db.schema
      .createIndex('toolgate_events_session')
      .on('toolgate_events')
      .columns(['session', 'seq'])
      .execute();
    await db.schema
      .createIndex('toolgate_events_call')
      .on('toolgate_events')
      .columns(['call_id', 'seq'])
      .execute();

    await db.schema
      .createTable('toolgate_sessions')
      .addColumn('id', 'text', (col) => col.primaryKey())
      .addColumn('owner', 'text', (col) => col.notNull())
      .addColumn('created_at', 'bigint', (col) => col.notNull())
      .execute();

    await db.schema
      .createTable('toolgate_chain')
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('last_seq', 'bigint', (col) => col.notNull())
      .addColumn('last_hash', 'text', (col) => col.notNull())
      .addColumn('algorithm', 'text')
      .execute();
    await (db as Kysely<Tables>)
      .insertInto('toolgate_chain')
      .values({ id: 1, last_seq: 0, last_hash: '0'.repeat(64), algorithm: null })
      .execute();
  },
};

// The tables as this migration leaves them (not the current schema, which later ones may change).
interface Tables {
  toolgate_chain: { id: number; last_seq: number; last_hash: string; algorithm: string | null };
}
