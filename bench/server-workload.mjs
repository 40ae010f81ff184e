// What the server bench runs, shared by its main process and the app-server processes it starts:
// the tool, its arguments, the hand-written server the gate is measured against, and a driver that
// keeps a number of calls in flight.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { mkdtempSync, rmSync } from 'node:fs';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

register('./packed.mjs', import.meta.url);
const { AJV_OPTIONS, defineTool } = await import('../packages/core/dist/index.js');
export const server = await import('../packages/server/dist/index.js');

export const schema = {
  type: 'object',
  properties: {
    to: { type: 'string', format: 'email' },
    amount_cents: { type: 'integer', minimum: 1 },
    memo: { type: 'string', maxLength: 140 },
  },
  required: ['to', 'amount_cents'],
  additionalProperties: false,
};
export const transfer = defineTool({
  name: 'transfer',
  inputSchema: schema,
  execute: (input) => ({ sent: input.amount_cents }),
});
export const args = JSON.stringify({ to: 'alice@example.com', amount_cents: 2000, memo: 'rent' });

/** The hand-written server's tables, beside the ledger's in the same database. */
export async function benchTables(db) {
  await db.schema
    .createTable('bench_calls')
    .ifNotExists()
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('input', 'text', (col) => col.notNull())
    .addColumn('output', 'text')
    .execute();
  await db.schema
    .createTable('bench_audit')
    .ifNotExists()
    .addColumn('call_id', 'text', (col) => col.notNull())
    .addColumn('from_status', 'text')
    .addColumn('to_status', 'text', (col) => col.notNull())
    .addColumn('at', 'bigint', (col) => col.notNull())
    .execute();
}

/**
 * One call the way a careful server does it by hand: validate with the same Ajv; insert the call
 * as claimed with an audit row, in one transaction (so the claim is durable before the effect);
 * run the tool; mark it committed with an audit row, in a second.
 */
export function byHand(db) {
  const ajv = new Ajv2020({ ...AJV_OPTIONS });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  return async (id) => {
    const input = JSON.parse(args);
    if (!validate(input)) throw new Error('invalid');
    await db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('bench_calls')
        .values({ id, status: 'executing', input: JSON.stringify(input), output: null })
        .onConflict((conflict) => conflict.column('id').doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) throw new Error('not claimed');
      await trx
        .insertInto('bench_audit')
        .values({ call_id: id, from_status: null, to_status: 'executing', at: Date.now() })
        .execute();
    });
    const output = await transfer.execute(input);
    await db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('bench_calls')
        .set({ status: 'committed', output: JSON.stringify(output) })
        .where('id', '=', id)
        .where('status', '=', 'executing')
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) throw new Error('not committed');
      await trx
        .insertInto('bench_audit')
        .values({ call_id: id, from_status: 'executing', to_status: 'committed', at: Date.now() })
        .execute();
    });
  };
}

/** One call through a server gate, to `committed`. */
export function throughGate(gate, session = 'bench') {
  return async (id) => {
    const call = await gate.run({ id, name: 'transfer', arguments: args }, { session, principal: 'bench' });
    if (call.status !== 'committed')
      throw new Error(`bench call ended ${call.status}: ${call.reason?.message}`);
  };
}

/** Runs `n` calls of `one` (each given a fresh id with `prefix`), `inFlight` at a time. */
export async function drive(one, prefix, n, inFlight = 1) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, n) }, async () => {
      while (next < n) await one(`${prefix}_${next++}`);
    }),
  );
}

/**
 * Runs `use(url)` on a PostgreSQL database of its own (`<prefix>_<pid>`, so two runs never meet),
 * dropped afterwards whatever `use` does. Answers false, having said so, when no database could be
 * made (PostgreSQL down, no rights): the caller counts its rows as missed.
 */
export async function withScratchDatabase(prefix, use) {
  const admin = process.env.TOOLGATE_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `${prefix}_${process.pid}`;
  const url = new URL(admin);
  url.pathname = `/${name}`;
  try {
    const client = new pg.Client({ connectionString: admin, connectionTimeoutMillis: 3000 });
    await client.connect();
    await client.query(`create database ${name}`);
    await client.end();
  } catch (error) {
    console.log(`PostgreSQL rows skipped (MISSED): ${error.message}`);
    return false;
  }
  try {
    await use(url.toString());
  } finally {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`);
    await client.end();
  }
  return true;
}

/**
 * Runs `use(path)` with the path of an SQLite file in a directory of its own, removed afterwards
 * whatever `use` does: the SQLite half of every server bench.
 */
export async function withScratchFile(prefix, use) {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  try {
    return await use(join(dir, 'bench.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
