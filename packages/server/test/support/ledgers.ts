import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, it } from 'vitest';
import { postgresLedger, sqliteLedger, type Ledger, type LedgerOptions } from '../../src/index.ts';

/** One place a ledger is kept: a SQLite file, a SQLite database in memory, or a PostgreSQL database. */
export interface Store {
  /** Opens a ledger object on this store; every one is closed after the test. */
  readonly open: (options?: LedgerOptions) => Promise<Ledger>;
  /** The file path or connection string. */
  readonly location: string;
}

export interface Target {
  readonly name: string;
  readonly dialect: 'sqlite' | 'postgres';
  /** An empty store of its own, dropped after the test file. */
  readonly fresh: () => Promise<Store>;
}

const opened = new Set<Ledger>();
afterEach(async () => {
  await Promise.all([...opened].map((ledger) => ledger.close()));
  opened.clear();
});

/** Opens a ledger the harness closes after the test. */
export function keep(ledger: Ledger): Ledger {
  opened.add(ledger);
  return ledger;
}

// SQLite: a temporary directory per test file, a new file per store.
let directory: string | undefined;
afterAll(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
});

/** A directory that is removed after the test file. */
export function scratchDirectory(): string {
  directory ??= mkdtempSync(join(tmpdir(), 'toolgate-ledger-'));
  return directory;
}

const sqliteFile: Target = {
  name: 'SQLite file',
  dialect: 'sqlite',
  fresh: () => {
    const path = join(scratchDirectory(), `${randomBytes(6).toString('hex')}.db`);
    return Promise.resolve({
      location: path,
      open: async (options = {}) => keep(await sqliteLedger({ ...options, path })),
    });
  },
};

const sqliteMemory: Target = {
  name: 'SQLite in memory',
  dialect: 'sqlite',
  fresh: () =>
    Promise.resolve({
      location: ':memory:',
      open: async (options = {}) => keep(await sqliteLedger({ ...options, path: ':memory:' })),
    }),
};

// PostgreSQL on this machine (127.0.0.1:5432, trust auth), or TOOLGATE_TEST_POSTGRES_URL: a
// database of its own per test file, `tg_<random>`, dropped after it, so that runs never meet.
// Creating a database takes about half a second here, so each store empties that one instead:
// one store per test.
const server = await findPostgres();
let database: Promise<string> | undefined;
afterAll(async () => {
  if (!('admin' in server) || database === undefined) return;
  const name = new URL(await database).pathname.slice(1);
  await withAdmin(server.admin, (admin) => admin.query(`drop database if exists ${name} with (force)`));
});

const postgres: Target = {
  name: 'PostgreSQL',
  dialect: 'postgres',
  fresh: async () => {
    if (!('admin' in server)) throw new Error(server.missing);
    const { admin } = server;
    database ??= (async () => {
      const name = `tg_${randomBytes(6).toString('hex')}`;
      await withAdmin(admin, async (client) => {
        await client.query(`create database ${name}`);
        // Commits wait for no disk flush: only a crash of PostgreSQL itself could lose them, and
        // the tests' databases are thrown away. Locks and visibility are unchanged.
        await client.query(`alter database ${name} set synchronous_commit = off`);
      });
      const url = new URL(admin);
      url.pathname = `/${name}`;
      return url.toString();
    })();
    const location = await database;
    await withAdmin(location, (client) =>
      client.query(
        `do $$ declare t text; begin for t in select tablename from pg_tables where schemaname = current_schema() and tablename like 'toolgate\\_%' loop execute format('drop table if exists %I cascade', t); end loop; end $$`,
      ),
    );
    return {
      location,
      open: async (options = {}) => keep(await postgresLedger({ ...options, connectionString: location })),
    };
  },
};

/** The connection string of a database with the rights to create databases, when PostgreSQL can be reached. */
export const postgresAdmin: string | undefined = 'admin' in server ? server.admin : undefined;

/**
 * Declares `body`'s tests once per kind of store. `shared: true` leaves out SQLite in memory, for
 * tests that open two ledger objects on one store; `dialects` keeps only those. Without PostgreSQL
 * its suite is skipped with a warning, except under CI, where it fails.
 */
export function describeLedgers(
  title: string,
  body: (target: Target) => void,
  {
    shared = false,
    dialects = ['sqlite', 'postgres'],
  }: { shared?: boolean; dialects?: readonly Target['dialect'][] } = {},
): void {
  const targets = shared ? [sqliteFile, postgres] : [sqliteFile, sqliteMemory, postgres];
  for (const target of targets.filter((candidate) => dialects.includes(candidate.dialect))) {
    const name = `${title} (${target.name})`;
    if (target === postgres && !('admin' in server)) {
      if (process.env.CI === 'true') {
        describe(name, () => {
          it('reaches PostgreSQL, which CI requires', () => {
            throw new Error(`PostgreSQL is required when CI=true: ${server.missing}`);
          });
        });
      } else {
        // Not declared at all: the warning is what says they did not run.
        warnOnce(server.missing);
      }
      continue;
    }
    describe(name, () => body(target));
  }
}

let warned = false;
function warnOnce(why: string) {
  if (warned) return;
  warned = true;
  console.warn(
    `\n!!! SKIPPING the PostgreSQL ledger tests: ${why}\n!!! Start PostgreSQL on 127.0.0.1:5432 (or set TOOLGATE_TEST_POSTGRES_URL); with CI=true they fail instead.\n`,
  );
}

async function findPostgres(): Promise<{ admin: string } | { missing: string }> {
  const candidates = process.env.TOOLGATE_TEST_POSTGRES_URL
    ? [process.env.TOOLGATE_TEST_POSTGRES_URL]
    : ['postgres://postgres@127.0.0.1:5432/postgres', 'postgres://root@127.0.0.1:5432/postgres'];
  const failures: string[] = [];
  for (const candidate of candidates) {
    try {
      const allowed = await withAdmin(candidate, async (admin) => {
        const { rows } = await admin.query<{ allowed: boolean }>(
          'select rolcreatedb or rolsuper as allowed from pg_roles where rolname = current_user',
        );
        return rows[0]?.allowed === true;
      });
      if (allowed) return { admin: candidate };
      failures.push(`${candidate}: may not create databases`);
    } catch (error) {
      failures.push(`${candidate}: ${error instanceof Error ? error.message || error.name : String(error)}`);
    }
  }
  return { missing: `no PostgreSQL to test against (${failures.join('; ')})` };
}

/** Runs `work` on a connection of its own to `url`, then closes it. */
export async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
