import type { Kysely } from 'kysely';

// Released migrations are never edited: a database that ran this one keeps what it made. Change
// the schema with a new numbered migration instead.

/**
 * What happens to a call while nobody decides it: one row per reminder, escalation step and expiry,
 * with its due time, written in the transaction that makes the call wait and done (fired, or
 * cancelled by the decision) once. Any process takes a due row under a claim: a lease with a
 * fencing token, like a call's, so a process that dies holding it delays it by one lease at most.
 *
 * @example
 * const provider = { getMigrations: async () => ({ '0008-approval-timers': approvalTimers }) };
 */
export const approvalTimers = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('toolgate_timers')
      .addColumn('call_id', 'text', (col) => col.notNull())
      .addColumn('kind', 'text', (col) => col.notNull())
      .addColumn('step', 'integer', (col) => col.notNull())
      .addColumn('due_at', 'bigint', (col) => col.notNull())
      .addColumn('done_at', 'bigint')
      .addColumn('outcome', 'text')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('fence', 'integer', (col) => col.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('toolgate_timers_pk', ['call_id', 'kind', 'step'])
      .execute();
    await db.schema
      .createIndex('toolgate_timers_due')
      .on('toolgate_timers')
      .columns(['done_at', 'due_at'])
      .execute();
  },
};
