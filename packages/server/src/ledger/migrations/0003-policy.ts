import type { Kysely } from 'kysely';

// Released migrations are never edited: a database that ran this one keeps what it made. Change
// the schema with a new numbered migration instead.

/**
 * Policy: what each budget has admitted (one row per call and budget), and each approval of a
 * call that needs more than one approver.
 *
 * @example
 * const provider = { getMigrations: async () => ({ '0003-policy': policy }) };
 */
export const policy = {
  async up(db: Kysely<unknown>): Promise<void> {
    // No foreign key to toolgate_calls: the row is written in the transaction that writes the
    // call, and what it counts is read by joining the call's status.
    await db.schema
      .createTable('toolgate_budget_uses')
      .addColumn('call_id', 'text', (col) => col.notNull())
      .addColumn('budget', 'text', (col) => col.notNull())
      .addColumn('key', 'text', (col) => col.notNull())
      .addColumn('amount', 'double precision', (col) => col.notNull())
      .addColumn('at', 'bigint', (col) => col.notNull())
      .addPrimaryKeyConstraint('toolgate_budget_uses_pk', ['call_id', 'budget'])
      .execute();
    await db.schema
      .createIndex('toolgate_budget_uses_window')
      .on('toolgate_budget_uses')
      .columns(['budget', 'key', 'at'])
      .execute();

    await db.schema
      .createTable('toolgate_approvers')
      .addColumn('call_id', 'text', (col) => col.notNull())
      .addColumn('principal', 'text', (col) => col.notNull())
      .addColumn('input_hash', 'text', (col) => col.notNull())
      .addColumn('at', 'bigint', (col) => col.notNull())
      .addPrimaryKeyConstraint('toolgate_approvers_pk', ['call_id', 'principal'])
      .execute();
  },
};
