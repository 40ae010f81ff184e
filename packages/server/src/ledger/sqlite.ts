import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  SqliteAdapter,
  SqliteDriver,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type SqliteDialectConfig,
} from 'kysely';
import { fileGuard, type FileGuard } from './guards/file-guard.ts';
import { unavailable, type Failure } from './error.ts';
import type { Ledger, LedgerOptions } from './ledger.ts';
import { openLedger } from './open-ledger.ts';
import { sqliteCheckpoints, type SqliteCheckpoints } from './sqlite-checkpoints.ts';
import type { LedgerDatabase } from './schema.ts';

/**
 * Where the SQLite ledger lives, and how long a write waits for another connection's lock.
 *
 * @example
 * const options: SqliteLedgerOptions = { path: './data/toolgate.db', busyTimeoutMs: 2000 };
 */
export interface SqliteLedgerOptions extends LedgerOptions {
  /** The database file (its directory must exist), or `':memory:'` for a ledger that lives as long as the object. */
  readonly path: string;
  /**
   * How long a transaction waits for a lock another connection holds before it fails, in
   * milliseconds (default 5000). It waits on timers, trying again every 100 ms at most, so the
   * process goes on serving meanwhile.
   */
  readonly busyTimeoutMs?: number;
}

/**
 * Opens (creating it if needed) a ledger in a SQLite file, through better-sqlite3 (an optional
 * peer dependency: install it to use this), and applies its migrations. One app server, one file:
 * several processes may share the file, but writes then take turns. In one process, share one
 * ledger object per file.
 *
 * Resolves once the database is ready; rejects with a `LedgerError` (`ledger_unavailable`) when
 * the file cannot be opened or written.
 *
 * @example
 * const ledger = await sqliteLedger({ path: './toolgate.db' });
 * const tests = await sqliteLedger({ path: ':memory:' });
 */
export async function sqliteLedger(options: SqliteLedgerOptions): Promise<Ledger> {
  const Database = await loadDriver();
  const memory = options.path === ':memory:' || options.path === '';
  let database: BetterSqlite3.Database;
  try {
    // No busy wait in the driver: it waits synchronously, and every request, heartbeat and lease
    // renewal of the process would wait with it (and two ledger objects on one file in one process
    // would wait for each other for ever). A locked database is tried again on a timer instead.
    database = new Database(options.path, { timeout: 0 });
  } catch (error) {
    throw asLedgerError(error, `cannot open ${options.path}`);
  }
  try {
    // WAL lets readers go on while one writer commits. synchronous=FULL syncs the log on every
    // commit: with NORMAL, a power cut can lose the last commits, and a lost `executing` claim
    // would let a side effect that already happened run again.
    await whileLocked(options.busyTimeoutMs ?? 5000, () => database.pragma('journal_mode = WAL'));
    database.pragma('synchronous = FULL');
    database.pragma('foreign_keys = ON');
  } catch (error) {
    database.close();
    throw asLedgerError(error, `cannot set up ${options.path}`);
  }

  const guard = memory ? undefined : fileGuard(options.path);
  // A database in memory has no log to checkpoint.
  const checkpoints = memory
    ? undefined
    : sqliteCheckpoints(options.path, (pages) => database.pragma(`wal_autocheckpoint = ${pages}`));
  const db = new Kysely<LedgerDatabase>({ dialect: immediateSqlite(database, guard, checkpoints) });
  const pollMs = options.pollMs ?? 250;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  // The path is looked at between transactions too, so that a file put in its place is noticed
  // (and this ledger's log moved out of its way) before something else opens it.
  const watchFile = guard === undefined ? undefined : setInterval(() => lookAtFile(guard, onError), pollMs);
  watchFile?.unref();
  const ledger = await openLedger(
    {
      dialect: 'sqlite',
      db,
      watch(wake) {
        // Nothing but this connection can write to a database in memory.
        if (memory) return () => undefined;
        // data_version changes whenever another connection (of this process or another) commits.
        let version = dataVersion(database);
        const timer = setInterval(() => {
          try {
            const now = dataVersion(database);
            if (now === version) return;
            version = now;
            wake();
          } catch (error) {
            onError(error);
          }
        }, pollMs);
        timer.unref();
        return () => clearInterval(timer);
      },
      failure: sqliteFailure,
      lockWaitMs: options.busyTimeoutMs ?? 5000,
      close: async () => {
        clearInterval(watchFile);
        // SQLite leaves the log of a file that was moved beside its old path when it closes.
        if (guard !== undefined) lookAtFile(guard, onError);
        // The ledger's connection closes last, so it checkpoints what is left and removes the log.
        await checkpoints?.stop();
        return db.destroy();
      },
    },
    options,
  );
  guard?.opened();
  return ledger;
}

/** Runs `work` again on a timer while the database is locked by another connection, for at most `ms`. */
async function whileLocked<T>(ms: number, work: () => T): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      return work();
    } catch (error) {
      if (sqliteFailure(error)?.kind !== 'retry' || Date.now() - started > ms) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
    }
  }
}

function dataVersion(database: BetterSqlite3.Database): unknown {
  return database.pragma('data_version', { simple: true });
}

async function loadDriver(): Promise<typeof BetterSqlite3> {
  try {
    return (await import('better-sqlite3')).default;
  } catch (error) {
    throw new Error(
      'sqliteLedger needs the better-sqlite3 package: install it next to @toolgate/server (npm install better-sqlite3).',
      { cause: error },
    );
  }
}

/** Checks the path once, telling `onError` the first time it no longer leads to the ledger's file. */
function lookAtFile(guard: FileGuard, onError: (error: unknown) => void): void {
  try {
    guard.refused();
  } catch {
    return; // already told
  }
  try {
    guard.check();
  } catch (error) {
    onError(
      unavailable(sqliteFailure(error) ?? { kind: 'unavailable', what: String(error) }, error, 'reading'),
    );
  }
}

// Kysely's SQLite dialect, with two changes. Transactions start with BEGIN IMMEDIATE, taking the
// write lock at once: a deferred BEGIN that reads and then writes fails with SQLITE_BUSY, without
// waiting, when another connection committed in between. And migrations run in a transaction
// (SQLite does support transactional DDL), so two processes opening a new file apply them once.
function immediateSqlite(
  database: BetterSqlite3.Database,
  guard: FileGuard | undefined,
  checkpoints: SqliteCheckpoints | undefined,
): Dialect {
  return {
    createAdapter: () => new TransactionalSqliteAdapter(),
    createDriver: () =>
      new ImmediateSqliteDriver({ database: preparedOnce(database) }, database, guard, checkpoints),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

const PREPARED = 256;

// Kysely prepares every query it runs; the ledger runs the same few dozen queries again and again,
// and preparing one costs about as much as running it. Statements are kept by their SQL text (the
// values are bound at each run), the least recently used let go past a few hundred.
function preparedOnce(database: BetterSqlite3.Database): SqliteDialectConfig['database'] {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (statement === undefined) {
        statement = database.prepare(text);
        if (statements.size >= PREPARED) statements.delete(statements.keys().next().value as string);
      } else statements.delete(text);
      statements.set(text, statement);
      return statement;
    },
  };
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #guard: FileGuard | undefined;
  readonly #database: BetterSqlite3.Database;
  readonly #checkpoints: SqliteCheckpoints | undefined;

  constructor(
    config: SqliteDialectConfig,
    database: BetterSqlite3.Database,
    guard: FileGuard | undefined,
    checkpoints: SqliteCheckpoints | undefined,
  ) {
    super(config);
    this.#guard = guard;
    this.#database = database;
    this.#checkpoints = checkpoints;
  }

  // Reads of a file that was replaced would answer what nobody can find again: refused too.
  override async acquireConnection(): Promise<DatabaseConnection> {
    this.#guard?.refused();
    return super.acquireConnection();
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    this.#guard?.check();
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await super.commitTransaction(connection);
    this.#checkpoints?.committed();
  }

  // SQLite rolls a transaction back itself when a write fails for want of space (SQLITE_FULL) or
  // on an I/O error; a ROLLBACK after that fails ("cannot rollback - no transaction is active")
  // and would hide the error that says why. Nothing is left to roll back then.
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.#database.inTransaction) return;
    await super.rollbackTransaction(connection);
  }
}

class TransactionalSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

function asLedgerError(error: unknown, doing: string): unknown {
  const failure = sqliteFailure(error);
  return failure
    ? unavailable({ kind: 'unavailable', what: `${doing}: ${failure.what}` }, error, 'opening')
    : error;
}

/**
 * Reads a better-sqlite3 error: a lock is worth retrying; an unopenable, read-only, vanished,
 * full or damaged file means the ledger is unavailable. Constraint and SQL errors are bugs, not
 * outages, and are not translated.
 *
 * @example
 * sqliteFailure(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })); // { kind: 'retry', ... }
 */
export function sqliteFailure(error: unknown): Failure | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) {
    // better-sqlite3's own checks, before SQLite is asked.
    if (error instanceof TypeError && error.message.includes('database connection is not open')) {
      return { kind: 'unavailable', what: 'the SQLite database was closed' };
    }
    if (error instanceof TypeError && error.message.includes('directory does not exist')) {
      return { kind: 'unavailable', what: 'the directory of the SQLite database file does not exist' };
    }
    return undefined;
  }
  const kind = code.replace(/^SQLITE_/, '').replace(/_.*$/, '');
  switch (kind) {
    case 'BUSY':
    case 'LOCKED':
      return { kind: 'retry', what: 'the SQLite database is locked by another connection' };
    case 'READONLY':
      if (code === 'SQLITE_READONLY_DBMOVED')
        return {
          kind: 'unavailable',
          what: 'the SQLite database file was moved or removed while the ledger had it open',
        };
      return {
        kind: 'unavailable',
        what: 'the SQLite database is read-only (check the permissions of the file and of its directory)',
      };
    case 'CANTOPEN':
      return {
        kind: 'unavailable',
        what: 'the SQLite database file cannot be opened (does its directory exist?)',
      };
    case 'IOERR':
      return {
        kind: 'unavailable',
        what: 'reading or writing the SQLite database file failed (was the file or its directory removed?)',
      };
    case 'FULL':
      return { kind: 'unavailable', what: 'the disk holding the SQLite database is full' };
    case 'CORRUPT':
    case 'NOTADB':
      return {
        kind: 'unavailable',
        what: 'the SQLite database file is damaged, or is not a SQLite database',
      };
    case 'PERM':
    case 'AUTH':
    case 'PROTOCOL':
    case 'NOLFS':
    case 'NOMEM':
      return { kind: 'unavailable', what: `SQLite could not use the database (${code})` };
    default:
      return undefined;
  }
}
