// verify() on a large ledger, on an SQLite file and on PostgreSQL: 100,000 settled calls (400,000
// events, each with the record a real call through the gate writes). First 75,000 calls are
// verified and the answer kept; 25,000 more are appended; then verify({ from: kept }) walks what
// came after the checkpoint, and a whole verify() walks everything. Each walk prints its rate, the
// longest a query made it wait (PostgreSQL: the longest query, against queryTimeoutMs; SQLite: the
// longest the event loop was held, since its queries run on it), and the heap it kept alive
// (sampled after a full collection every 40 pages), so the 400,000-event walk can be set beside the
// 300,000-event one in the same run. Targets: 400,000 events on PostgreSQL in under 60 s; no query
// longer than a twentieth of queryTimeoutMs; the longer walk keeping less than 4 MB more than the shorter.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { server, throughGate, transfer, withScratchDatabase } from './server-workload.mjs';

const { createServerGate, postgresLedger, sqliteLedger } = server;
const FIRST = 75_000;
const LATER = 25_000;
const BATCH = 250;
const QUERY_TIMEOUT_MS = 10_000;
const failures = [];

/** One real call through a server gate: its events (each with its record) and its row, to copy. */
async function template() {
  const ledger = await sqliteLedger({ path: ':memory:' });
  const gate = createServerGate({ tools: [transfer], ledger, recover: false });
  await throughGate(gate, 'verify_bench')('template_call');
  await gate.close();
  const events = await ledger.db.selectFrom('toolgate_events').selectAll().orderBy('seq').execute();
  const row = await ledger.db.selectFrom('toolgate_calls').selectAll().executeTakeFirstOrThrow();
  const session = await ledger.db.selectFrom('toolgate_sessions').selectAll().executeTakeFirstOrThrow();
  await ledger.close();
  return { events, row, session };
}

/** Appends `count` settled calls numbered from `first`, a transaction of BATCH calls at a time. */
async function seed(ledger, { events, row, session }, first, count) {
  const as = (text, id) => (typeof text === 'string' ? text.replaceAll('template_call', id) : text);
  if (first === 0)
    await ledger.transaction((trx) => trx.insertInto('toolgate_sessions').values(session).execute());
  for (let n = first; n < first + count; n += BATCH) {
    await ledger.transaction(async (trx) => {
      const rows = [];
      const moves = [];
      for (let i = n; i < Math.min(first + count, n + BATCH); i++) {
        const id = `call_${i}`;
        rows.push(Object.fromEntries(Object.entries(row).map(([column, value]) => [column, as(value, id)])));
        for (const event of events) {
          moves.push({
            callId: id,
            session: event.session,
            from: event.from_status,
            to: event.to_status,
            actor: event.actor,
            at: event.at,
            ...(event.reason === null ? {} : { reason: JSON.parse(event.reason) }),
            ...(event.record === null ? {} : { record: as(event.record, id) }),
          });
        }
      }
      await trx.insertInto('toolgate_calls').values(rows).execute();
      await ledger.appendEvents(trx, moves);
    });
  }
}

/** The longest a single query took while `work` ran: every PostgreSQL query goes through pg.Client. */
async function longestQuery(work) {
  const query = pg.Client.prototype.query;
  let longest = 0;
  pg.Client.prototype.query = function (...args) {
    const started = performance.now();
    const result = query.apply(this, args);
    const done = () => (longest = Math.max(longest, performance.now() - started));
    if (result && typeof result.then === 'function') result.then(done, done);
    return result;
  };
  try {
    return { result: await work(), longest };
  } finally {
    pg.Client.prototype.query = query;
  }
}

/** The longest the event loop was held while `work` ran (SQLite's queries run on it). */
async function longestStall(work) {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  try {
    return { result: await work(), longest: delay.max / 1e6 };
  } finally {
    delay.disable();
  }
}

/** One verify(), timed, with the heap it kept alive above where it started. */
async function walk(ledger, options, watch) {
  globalThis.gc?.();
  const base = process.memoryUsage().heapUsed;
  let kept = 0;
  let pages = 0;
  let eventsDone;
  const started = performance.now();
  const { result, longest } = await watch(() =>
    ledger.verify({
      ...options,
      onProgress: (progress) => {
        if (progress.calls > 0) eventsDone ??= performance.now();
        if (++pages % 40 !== 0) return;
        globalThis.gc?.();
        kept = Math.max(kept, process.memoryUsage().heapUsed - base);
      },
    }),
  );
  const ms = performance.now() - started;
  if (!result.ok) throw new Error(`verify() failed: ${result.why}`);
  return { result, ms, eventsMs: (eventsDone ?? performance.now()) - started, longest, kept };
}

function print(label, walked, { ms, eventsMs, longest, kept }, stall) {
  const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(
    `${label.padEnd(44)} ${(ms / 1000).toFixed(1).padStart(6)} s  ${Math.round((walked / eventsMs) * 1000)
      .toString()
      .padStart(
        7,
      )} events/s, calls ${((ms - eventsMs) / 1000).toFixed(1)} s  ${stall} ${longest.toFixed(0)} ms  heap kept ${mb(kept)}`,
  );
}

async function measure(name, ledger, watch, stall) {
  const shape = await template();
  const seedStarted = performance.now();
  await seed(ledger, shape, 0, FIRST);
  const first = await walk(ledger, {}, watch);
  await seed(ledger, shape, FIRST, LATER);
  const seeded = ((performance.now() - seedStarted - first.ms) / 1000).toFixed(0);
  const events = (FIRST + LATER) * shape.events.length;
  console.log(`\n${name}: ${FIRST + LATER} settled calls, ${events} events (written in ${seeded} s)`);
  print(`verify(), ${first.result.events} events`, first.result.events, first, stall);
  const later = await walk(ledger, { from: first.result }, watch);
  print(
    `verify({ from }), the last ${events - first.result.events}`,
    events - first.result.events,
    later,
    stall,
  );
  const whole = await walk(ledger, {}, watch);
  if (whole.result.events !== events) throw new Error(`verify() walked ${whole.result.events} events`);
  print(`verify(), ${events} events`, events, whole, stall);
  // A walk that kept what it read would keep about a kilobyte an event: 100 MB more for the longer one.
  const grown = whole.kept - first.kept;
  const flat = grown < 4 * 1024 * 1024;
  console.log(
    `heap kept by the walk of ${events} events, against ${first.result.events}: ${grown >= 0 ? '+' : ''}${(grown / 1024 / 1024).toFixed(1)} MB  (target < +4 MB: flat) ${flat ? 'ok' : 'MISSED'}`,
  );
  if (!flat) failures.push(`${name} memory`);
  return whole;
}

console.log('\nverify(): a whole walk, and one from a checkpoint, of a ledger of settled calls');

const dir = mkdtempSync(join(tmpdir(), 'toolgate-verify-bench-'));
let sqlite;
try {
  const ledger = await sqliteLedger({ path: join(dir, 'verify.db') });
  sqlite = await measure('SQLite file', ledger, longestStall, 'event loop held');
  await ledger.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const reached = await withScratchDatabase('tg_verify', async (database) => {
  const ledger = await postgresLedger({ connectionString: database, queryTimeoutMs: QUERY_TIMEOUT_MS });
  const postgres = await measure('PostgreSQL', ledger, longestQuery, 'longest query');
  await ledger.close();
  const fast = postgres.ms < 60_000;
  console.log(
    `PostgreSQL, ${postgres.result.events} events: ${(postgres.ms / 1000).toFixed(1)} s  (target < 60 s) ${fast ? 'ok' : 'MISSED'}`,
  );
  if (!fast) failures.push('PostgreSQL time');
  const short = postgres.longest < QUERY_TIMEOUT_MS / 20;
  console.log(
    `PostgreSQL, longest query ${postgres.longest.toFixed(0)} ms of queryTimeoutMs ${QUERY_TIMEOUT_MS}  (target < 1/20) ${short ? 'ok' : 'MISSED'}`,
  );
  if (!short) failures.push('PostgreSQL longest query');
  if (sqlite !== undefined)
    console.log(`PostgreSQL / SQLite file, whole walk: ${(postgres.ms / sqlite.ms).toFixed(2)}×`);
});
if (!reached) failures.push('PostgreSQL');

process.exit(failures.length === 0 ? 0 : 1);
