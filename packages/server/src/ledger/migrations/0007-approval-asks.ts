import type { Kysely } from 'kysely';

// Released migrations are never edited: a database that ran this one keeps what it made. Change
// the schema with a new numbered migration instead.

/**
 * Who is asked about each call waiting for a person (one row per call and principal, while that
 * principal still has a decision to make), so that a principal's inbox is read by its index
 * instead of by reading every waiting call of every session. Calls already waiting when the
 * ledger is upgraded are indexed from their records.
 *
 * @example
 * const provider = { getMigrations: async () => ({ '0007-approval-asks': approvalAsks }) };
 */
export const approvalAsks = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('toolgate_asks')
      .addColumn('call_id', 'text', (col) => col.notNull())
      .addColumn('principal', 'text', (col) => col.notNull())
      .addColumn('at', 'bigint', (col) => col.notNull())
      .addPrimaryKeyConstraint('toolgate_asks_pk', ['call_id', 'principal'])
      .execute();
    await db.schema.createIndex('toolgate_asks_principal').on('toolgate_asks').column('principal').execute();

    const typed = db as unknown as Kysely<{
      toolgate_calls: { id: string; record: string; status: string; updated_at: number };
      toolgate_asks: { call_id: string; principal: string; at: number };
    }>;
    const waiting = await typed
      .selectFrom('toolgate_calls')
      .select(['id', 'record', 'updated_at'])
      .where('status', '=', 'awaiting_approval')
      .execute();
    for (const call of waiting) {
      const approval = (JSON.parse(call.record) as { approval?: Approval }).approval;
      const voted = new Set((approval?.approvedBy ?? []).map((vote) => vote.principal));
      const rows = (approval?.asked ?? [])
        .filter((principal) => !voted.has(principal))
        .map((principal) => ({ call_id: call.id, principal, at: Number(call.updated_at) }));
      if (rows.length > 0) await typed.insertInto('toolgate_asks').values(rows).execute();
    }
  },
};

interface Approval {
  readonly asked?: readonly string[];
  readonly approvedBy?: readonly { readonly principal: string }[];
}
