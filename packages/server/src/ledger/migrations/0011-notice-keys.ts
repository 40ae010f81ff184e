import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Released migrations are never edited: a database that ran this one keeps what it made. Change
// the schema with a new numbered migration instead.

/**
 * Fewer b-trees for a call that asks someone: every row of `toolgate_asks` and `toolgate_notices`
 * is written, and most are deleted or marked, in the transactions of a call's moves, and each
 * index is one more page each of them writes.
 *
 * An ask is keyed by principal then call: the inbox reads a principal's asks by the key's prefix,
 * and a call's asks are deleted by naming who it asked. On SQLite the table is the key alone
 * (`WITHOUT ROWID`; its rows are small), so an ask is one b-tree instead of three.
 *
 * A notice is keyed by its call, principal, channel and id (the id already names the call and
 * principal, so it is as unique as the id and channel were): every read of a call's notices to
 * a principal goes by the key's prefix, and the index of them goes. The index of due notices
 * holds only those not delivered, the ones every sweep looks for.
 *
 * @example
 * const provider = { getMigrations: async () => ({ '0011-notice-keys': noticeKeys }) };
 */
export const noticeKeys = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`alter table toolgate_asks drop constraint toolgate_asks_pk`.execute(db);
      await sql`alter table toolgate_asks add constraint toolgate_asks_pk primary key (principal, call_id)`.execute(
        db,
      );
      await sql`alter table toolgate_notices drop constraint toolgate_notices_pk`.execute(db);
      await sql`alter table toolgate_notices add constraint toolgate_notices_pk primary key (call_id, principal, channel, id)`.execute(
        db,
      );
    } else {
      // SQLite changes no key in place: the tables are made again, with their rows.
      await db.schema
        .createTable('toolgate_asks_next')
        .addColumn('principal', 'text', (col) => col.notNull())
        .addColumn('call_id', 'text', (col) => col.notNull())
        .addColumn('at', 'bigint', (col) => col.notNull())
        .addPrimaryKeyConstraint('toolgate_asks_pk', ['principal', 'call_id'])
        .modifyEnd(sql`without rowid`)
        .execute();
      await sql`insert into toolgate_asks_next (principal, call_id, at) select principal, call_id, at from toolgate_asks`.execute(
        db,
      );
      await db.schema.dropTable('toolgate_asks').execute();
      await sql`alter table toolgate_asks_next rename to toolgate_asks`.execute(db);

      const columns = sql.raw(
        'id, channel, call_id, session, kind, principal, from_principal, from_on_behalf_of, record, created_at, rank, due_at, attempts, delivered_at, ref, lease_owner, lease_expires_at, fence',
      );
      await db.schema
        .createTable('toolgate_notices_next')
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
        .addPrimaryKeyConstraint('toolgate_notices_pk', ['call_id', 'principal', 'channel', 'id'])
        .execute();
      await sql`insert into toolgate_notices_next (${columns}) select ${columns} from toolgate_notices`.execute(
        db,
      );
      // Its indexes go with it.
      await db.schema.dropTable('toolgate_notices').execute();
      await sql`alter table toolgate_notices_next rename to toolgate_notices`.execute(db);
    }
    await db.schema.dropIndex('toolgate_asks_principal').ifExists().execute();
    await db.schema.dropIndex('toolgate_notices_of_call').ifExists().execute();
    await db.schema.dropIndex('toolgate_notices_due').ifExists().execute();
    await db.schema
      .createIndex('toolgate_notices_due')
      .on('toolgate_notices')
      .column('due_at')
      .where(sql.ref('delivered_at'), 'is', null)
      .execute();
  },
};
