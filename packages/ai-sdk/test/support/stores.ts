import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresLedger, sqliteLedger, type Ledger } from '@toolgate/server';
import pg from 'pg';
import { afterAll } from 'vitest';

/** Where a test's ledger is kept; opened again on the same store, it is the same ledger (a restart). */
export interface Store {
  readonly open: () => Promise<Ledger>;
}

/**
 * The tests' ledgers: SQLite files by default; PostgreSQL when TOOLGATE_AI_SDK_LEDGER=postgres (the
 * Node 22 run, where the SQLite driver built for Node 20 does not load), in a database of its own
 * per test file, dropped after it. PostgreSQL is 127.0.0.1:5432 or TOOLGATE_TEST_POSTGRES_URL.
 */
export const dialect = process.env['TOOLGATE_AI_SDK_LEDGER'] === 'postgres' ? 'postgres' : 'sqlite';

let directory: string | undefined;
let database: Promise<string> | undefined;
const admin = process.env['TOOLGATE_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

afterAll(async () => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  if (database !== undefined) {
    const name = new URL(await database).pathname.slice(1);
    await withClient(admin, (client) => client.query(`drop database if exists ${name} with (force)`));
  }
});

async function withClient<T>(connectionString: string, query: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await query(client);
  } finally {
    await client.end();
  }
}

/** An empty store of the run's dialect. */
export async function freshStore(): Promise<Store> {
  if (dialect === 'sqlite') {
    directory ??= mkdtempSync(join(tmpdir(), 'toolgate-ai-sdk-'));
    const path = join(directory, `${randomBytes(6).toString('hex')}.db`);
    return { open: () => sqliteLedger({ path }) };
  }
  database ??= (async () => {
    const name = `tg_ai_sdk_${randomBytes(6).toString('hex')}`;
    await withClient(admin, (client) => client.query(`create database ${name}`));
    const url = new URL(admin);
    url.pathname = `/${name}`;
    return url.toString();
  })();
  const connectionString = await database;
  // One store at a time per file: each test starts from empty tables (every toolgate table, whatever migration made it).
  await withClient(connectionString, (client) =>
    client.query(
      `do $$ declare t text; begin for t in select tablename from pg_tables where schemaname = current_schema() and tablename like 'toolgate\\_%' loop execute format('drop table if exists %I cascade', t); end loop; end $$`,
    ),
  );
  return { open: () => postgresLedger({ connectionString }) };
}
