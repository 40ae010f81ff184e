import type { Kysely } from 'kysely';

// Released migrations are never edited: a database that ran this one keeps what it made. Change
// the schema with a new numbered migration instead.

/**
 * What each budget key has in use now: the sum of its rows in `toolgate_budget_uses`, kept in step
 * with them, so that deciding a call reads one row instead of summing its window. Each row is also
 * the lock two app servers deciding under the same key take in turn.
 *
 * @example
 * const provider = { getMigrations: async () => ({ '0006-budget-totals': budgetTotals }) };
 */
export const budgetTotals = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('toolgate_budget_totals')
      .addColumn('budget', 'text', (col) => col.notNull())
      .addColumn('key', 'text', (col) => col.notNull())
      .addColumn('amount', 'double precision', (col) => col.notNull())
      // At most the time of its oldest use (null: none): no use can have left the window before then.
      .addColumn('oldest', 'bigint')
      .addPrimaryKeyConstraint('toolgate_budget_totals_pk', ['budget', 'key'])
      .execute();
    await db.schema
      .createIndex('toolgate_budget_uses_call')
      .on('toolgate_budget_uses')
      .column('call_id')
      .execute();
  },
};
