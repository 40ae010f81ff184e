// The server gate's cost per call on each ledger, against the least a correct server must do by
// hand on the same database; two app servers on one PostgreSQL against one; and the memory of a
// gate after many settled calls.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { register } from 'node:module';
import { compareAsync, report } from './measure.mjs';

register('./packed.mjs', import.meta.url);
const { AJV_OPTIONS, defineTool } = await import('../packages/core/dist/index.js');
const { createServerGate, postgresLedger, sqliteLedger } = await import('../packages/server/dist/index.js');

const schema = {
  type: 'object',
  properties: { to: { type: 'string', format: 'email' }, amount_cents: { type: 'integer', minimum: 1 }, memo: { type: 'string', maxLength: 140 } },
  required: ['to', 'amount_cents'],
  additionalProperties: false,
};
const transfer = defineTool({ name: 'transfer', inputSchema: schema, execute: (input) => ({ sent: input.amount_cents }) });
const args = JSON.stringify({ to: 'alice@example.com', amount_cents: 2000, memo: 'rent' });

/** By hand: validate with the same Ajv, insert the call, claim it in one transaction, commit it in another. */
function byHand(ledger) {
  const ajv = new Ajv2020({ ...AJV_OPTIONS });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  const db = ledger.db;
  let next = 0;
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const id = `hand_${next++}`;
      const input = JSON.parse(args);
      if (!validate(input)) throw new Error('invalid');
      await db.insertInto('bench_calls').values({ id, status: 'pending', input: JSON.stringify(input), output: null }).execute();
      await db.transaction().execute(async (trx) => {
        const claimed = await trx.updateTable('bench_calls').set({ status: 'executing' }).where('id', '=', id).where('status', '=', 'pending').executeTakeFirst();
        if (Number(claimed.numUpdatedRows) !== 1) throw new Error('not claimed');
      });
      const output = { sent: input.amount_cents };
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('bench_calls').set({ status: 'committed', output: JSON.stringify(output) }).where('id', '=', id).where('status', '=', 'executing').execute();
      });
    }
  };
}

function throughGate(gate, prefix) {
  let next = 0;
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const call = await gate.run({ id: `${prefix}_${next++}`, name: 'transfer', arguments: args }, { session: 'bench', principal: 'bench' });
      if (call.status !== 'committed') throw new Error(`bench call ended ${call.status}: ${call.reason?.message}`);
    }
  };
}

async function benchTable(ledger) {
  await ledger.db.schema
    .createTable('bench_calls')
    .ifNotExists()
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('input', 'text')
    .addColumn('output', 'text')
    .execute();
}

const failures = [];
const row = (label, result, target) => {
  if (!report(label, result, target)) failures.push(label);
};

console.log('\nserver gate: per call, against the least a correct server does by hand on the same database');

// SQLite: a file with synchronous=FULL, as the ledger always opens it.
const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
try {
  const ledger = await sqliteLedger({ path: join(dir, 'bench.db') });
  await benchTable(ledger);
  const gate = createServerGate({ tools: [transfer], ledger, recover: false });
  row('SQLite file: propose → committed', await compareAsync({ subject: throughGate(gate, 'sqlite'), baseline: byHand(ledger), n: 100 }), 2);
  await gate.close();
  await ledger.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// PostgreSQL: a database of its own, dropped afterwards.
const admin = process.env.TOOLGATE_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `tg_bench_${process.pid}`;
let database;
try {
  const client = new pg.Client({ connectionString: admin, connectionTimeoutMillis: 3000 });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  database = url.toString();
} catch (error) {
  console.log(`PostgreSQL rows skipped: ${error.message}`);
}
if (database !== undefined) {
  try {
    const ledger = await postgresLedger({ connectionString: database });
    await benchTable(ledger);
    const gate = createServerGate({ tools: [transfer], ledger, recover: false });
    row('PostgreSQL: propose → committed', await compareAsync({ subject: throughGate(gate, 'pg'), baseline: byHand(ledger), n: 100 }), 1.5);
    await gate.close();
    await ledger.close();
    await twoInstances(database);
  } finally {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`);
    await client.end();
  }
}

await memory();

/** 2,000 calls with 16 in flight, through one gate and then through two gates (separate pools) sharing the database. */
async function twoInstances(url) {
  console.log('\ntwo app servers on one PostgreSQL: 2,000 calls, 16 in flight');
  const run = async (instances) => {
    const ledgers = await Promise.all(Array.from({ length: instances }, () => postgresLedger({ connectionString: url })));
    const gates = ledgers.map((ledger, i) => createServerGate({ tools: [transfer], ledger, recover: false, instance: `bench-${i}` }));
    const latencies = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async (_, worker) => {
        for (;;) {
          const i = next++;
          if (i >= 2000) return;
          const gate = gates[(i + worker) % gates.length];
          const t0 = performance.now();
          const call = await gate.run({ id: `two_${instances}_${i}`, name: 'transfer', arguments: args }, { session: `bench_${instances}`, principal: 'bench' });
          latencies.push(performance.now() - t0);
          if (call.status !== 'committed') throw new Error(`call ended ${call.status}`);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    await Promise.all(gates.map((gate) => gate.close()));
    await Promise.all(ledgers.map((ledger) => ledger.close()));
    latencies.sort((a, b) => a - b);
    return { perSecond: 2000 / seconds, p50: latencies[1000], p99: latencies[1980] };
  };
  const one = await run(1);
  const two = await run(2);
  for (const [label, result] of [['one instance', one], ['two instances', two]]) {
    console.log(`${label.padEnd(16)} ${result.perSecond.toFixed(0).padStart(6)} calls/s   propose → committed p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms`);
  }
  const ratio = two.perSecond / one.perSecond;
  const ok = ratio >= 0.9;
  console.log(`two / one throughput ${ratio.toFixed(2)}×  (target ≥ 0.9×: it should not fall) ${ok ? 'ok' : 'MISSED'}`);
  if (!ok) failures.push('two instances');
}

/** The gate's heap after 10,000 and after 100,000 settled calls: records live in the ledger, not in the process. */
async function memory() {
  console.log('\nserver gate memory: heap after settled calls (SQLite in memory)');
  const ledger = await sqliteLedger({ path: ':memory:' });
  const gate = createServerGate({ tools: [transfer], ledger, recover: false });
  const run = throughGate(gate, 'mem');
  const heap = () => {
    globalThis.gc?.();
    globalThis.gc?.();
    return process.memoryUsage().heapUsed / 1024 / 1024;
  };
  await run(10_000);
  const at10k = heap();
  await run(90_000);
  const at100k = heap();
  await gate.close();
  await ledger.close();
  const ratio = at100k / at10k;
  const ok = ratio <= 1.2;
  console.log(`heap after 10,000 calls ${at10k.toFixed(1)} MB, after 100,000 ${at100k.toFixed(1)} MB: ${ratio.toFixed(2)}×  (target ≤ 1.2×: flat) ${ok ? 'ok' : 'MISSED'}`);
  if (!ok) failures.push('memory');
}

process.exit(failures.length === 0 ? 0 : 1);
