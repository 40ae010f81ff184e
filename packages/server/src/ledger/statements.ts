import { CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type { CallsTable, EventsTable, LedgerDatabase } from './schema.ts';

/**
 * A statement the ledger runs for every call, written out once as SQL for each dialect. Kysely's
 * builder makes, freezes and compiles a query tree at each run, which cost about as much CPU as
 * everything else a move does; these are handed to the driver as they are, with their values.
 *
 * @example
 * const INSERT_X = statement('insert into "x" ("a") values (?)');
 * await run(trx, 'postgres', INSERT_X, ['value']);
 */
export interface Statement {
  readonly sqlite: string;
  readonly postgres: string;
}

/**
 * A statement from SQL text with `?` placeholders (SQLite's), numbered `$1, $2, …` for PostgreSQL.
 * The text must hold no `?` other than its placeholders.
 *
 * @example
 * statement('select "record" from "toolgate_calls" where "id" = ?').postgres; // '… where "id" = $1'
 */
export function statement(text: string): Statement {
  let n = 0;
  return { sqlite: text, postgres: text.replace(/\?/g, () => `$${(n += 1)}`) };
}

/**
 * A write of one call's row (an insert that does nothing on a taken id, or an update guarded by
 * the version it read) and its values, for `Ledger.recordWith`.
 *
 * @example
 * const write: RowWrite = { statement: UPDATE_CALL, values: updateCallValues(columns, id, version) };
 */
export interface RowWrite {
  readonly statement: Statement;
  readonly values: readonly unknown[];
}

/**
 * Runs a statement in a transaction (or outside one, on the ledger's `db`).
 *
 * @example
 * const { numAffectedRows } = await run(trx, ledger.dialect, UPDATE_CALL, params);
 */
export function run<R = unknown>(
  db: Kysely<LedgerDatabase>,
  dialect: 'sqlite' | 'postgres',
  sql: Statement,
  parameters: readonly unknown[],
): Promise<QueryResult<R>> {
  return db.executeQuery<R>(CompiledQuery.raw(sql[dialect], parameters as unknown[]));
}

/** How many rows a write changed, as both drivers report it. */
export function changed(result: QueryResult<unknown>): number {
  return Number(result.numAffectedRows ?? 0n);
}

const CALL_COLUMNS = [
  'id',
  'session',
  'owner',
  'tool',
  'proposal_hash',
  'version',
  'idempotency_key',
  'created_at',
  'status',
  'record',
  'updated_at',
  'input',
  'input_hash',
  'output',
  'reason',
  'lease_owner',
  'lease_expires_at',
  'fence',
] as const satisfies readonly (keyof CallsTable)[];

/**
 * Column names quoted and joined, for a statement's text.
 *
 * @example
 * quoted(['id', 'record']); // '"id", "record"'
 */
export const quoted = (columns: readonly string[]): string =>
  columns.map((column) => `"${column}"`).join(', ');
const marks = (count: number) => `(${Array.from({ length: count }, () => '?').join(', ')})`;

/**
 * A statement of one of a few shapes (one per number of rows, say), made once per shape: the first
 * 64 shapes are kept, so that a prepared statement is found again, and odd sizes do not pile up.
 *
 * @example
 * const insert = shaped(inserts, rows.length, () => statement(textFor(rows.length)));
 */
export function shaped<K>(cache: Map<K, Statement>, key: K, make: () => Statement): Statement {
  let found = cache.get(key);
  if (found === undefined) {
    found = make();
    if (cache.size < 64) cache.set(key, found);
  }
  return found;
}

/** A call's first write: its row, unless another instance wrote the id first. */
export const INSERT_CALL = statement(
  `insert into "toolgate_calls" (${quoted(CALL_COLUMNS)}) values ${marks(CALL_COLUMNS.length)} on conflict ("id") do nothing`,
);

/**
 * The values of {@link INSERT_CALL}, in its column order.
 *
 * @example
 * await run(trx, dialect, INSERT_CALL, insertCallValues(row));
 */
export function insertCallValues(row: CallsTable): unknown[] {
  return CALL_COLUMNS.map((column) => row[column]);
}

const MOVE_COLUMNS = [
  'status',
  'record',
  'updated_at',
  'input',
  'input_hash',
  'output',
  'reason',
  'lease_owner',
  'lease_expires_at',
  'fence',
  'version',
] as const satisfies readonly (keyof CallsTable)[];

/** A move of a stored call, written only if the row is still the version it was read at. */
export const UPDATE_CALL = statement(
  `update "toolgate_calls" set ${MOVE_COLUMNS.map((column) => `"${column}" = ?`).join(', ')} where "id" = ? and "version" = ?`,
);

/**
 * The values of {@link UPDATE_CALL}: the row's new columns, then its id and the version it was read at.
 *
 * @example
 * await run(trx, dialect, UPDATE_CALL, updateCallValues({ ...columns, version: row.version + 1 }, row.id, row.version));
 */
export function updateCallValues(
  columns: Pick<CallsTable, (typeof MOVE_COLUMNS)[number]>,
  id: string,
  version: number,
): unknown[] {
  return [...MOVE_COLUMNS.map((column) => columns[column]), id, version];
}

/** What a proposal of a known id reads of its call. */
export const READ_CALL = statement(
  'select "record", "session", "owner", "proposal_hash" from "toolgate_calls" where "id" = ?',
);

/** SQLite: the chain head moves on only from the head this ledger expects, hashed as it hashes. */
export const GUARDED_HEAD = statement(
  'update "toolgate_chain" set "last_seq" = ?, "last_hash" = ?, "algorithm" = ? where "id" = 1 and "last_seq" = ? and "last_hash" = ? and ("algorithm" = ? or "algorithm" is null)',
);

/**
 * The columns of an event row, in the order the insert of events names them.
 *
 * @example
 * const values = rows.flatMap((row) => EVENT_COLUMNS.map((column) => row[column]));
 */
export const EVENT_COLUMNS = [
  'seq',
  'call_id',
  'session',
  'from_status',
  'to_status',
  'actor',
  'at',
  'reason',
  'record',
  'prev_hash',
  'hash',
] as const satisfies readonly (keyof EventsTable)[];

const eventInserts = new Map<number, Statement>();

/**
 * The insert of `count` event rows (kept per count: a move writes one, a first write a few).
 *
 * @example
 * await run(trx, 'sqlite', insertEvents(rows.length), rows.flatMap(eventValues));
 */
export function insertEvents(count: number): Statement {
  return shaped(eventInserts, count, () =>
    statement(
      `insert into "toolgate_events" (${quoted(EVENT_COLUMNS)}) values ${Array.from({ length: count }, () => marks(EVENT_COLUMNS.length)).join(', ')}`,
    ),
  );
}

/**
 * One event row's values, in {@link EVENT_COLUMNS} order.
 *
 * @example
 * const values = rows.flatMap(eventRowValues);
 */
export function eventRowValues(row: EventsTable): unknown[] {
  return EVENT_COLUMNS.map((column) => row[column]);
}
