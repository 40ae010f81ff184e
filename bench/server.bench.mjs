// The server gate's cost per call on each ledger, against what a careful server does by hand on
// the same database (see `byHand` in server-workload.mjs): sequentially on an SQLite file and on
// PostgreSQL, and with 16 calls in flight on PostgreSQL; then the throughput of two app servers
// (processes) on one PostgreSQL against one; then the heap of a gate after 100,000 settled calls.
// Every ratio is measured in this run, interleaved round by round, as a median.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { compareAsync, median, report } from './measure.mjs';
import {
  benchTables,
  byHand,
  drive,
  server,
  throughGate,
  transfer,
  withScratchDatabase,
} from './server-workload.mjs';

const { createServerGate, postgresLedger, sqliteLedger } = server;
const IN_FLIGHT = 16;
const failures = [];
const row = (label, result, target) => {
  if (!report(label, result, target)) failures.push(label);
};

/** `subject(n)` / `baseline(n)` for compareAsync: n calls, `inFlight` at a time, with fresh ids each round. */
function workload(one, prefix, inFlight = 1) {
  let round = 0;
  return (n) => drive(one, `${prefix}${round++}`, n, inFlight);
}

/** Calls spread over `count` sessions in turn, as concurrent calls come from several conversations. */
function spread(gate, count) {
  const sessions = Array.from({ length: count }, (_, i) => throughGate(gate, `bench_${i}`));
  let turn = 0;
  return (id) => sessions[turn++ % count](id);
}

console.log('\nserver gate: per call, against a careful hand-written server on the same database');

// SQLite: a file with synchronous=FULL, as the ledger always opens it (the hand-written server
// shares the ledger's connection, so it commits the same way).
const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
try {
  const ledger = await sqliteLedger({ path: join(dir, 'bench.db') });
  await benchTables(ledger.db);
  const gate = createServerGate({ tools: [transfer], ledger, recover: false });
  row(
    'SQLite file: propose → committed, one at a time',
    await compareAsync({
      subject: workload(throughGate(gate), 'sqlite'),
      baseline: workload(byHand(ledger.db), 'hand'),
      n: 100,
    }),
    1.5,
  );
  await gate.close();
  await ledger.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// PostgreSQL: a database of its own, dropped afterwards.
const reached = await withScratchDatabase('tg_bench', async (database) => {
  const ledger = await postgresLedger({ connectionString: database });
  await benchTables(ledger.db);
  const gate = createServerGate({ tools: [transfer], ledger, recover: false });
  const hand = byHand(ledger.db);
  row(
    'PostgreSQL: propose → committed, one at a time',
    await compareAsync({
      subject: workload(throughGate(gate), 'pg'),
      baseline: workload(hand, 'hand'),
      n: 100,
    }),
    1.5,
  );
  row(
    `PostgreSQL: propose → committed, ${IN_FLIGHT} in flight`,
    await compareAsync({
      subject: workload(spread(gate, IN_FLIGHT), 'pg16_', IN_FLIGHT),
      baseline: workload(hand, 'hand16_', IN_FLIGHT),
      n: 320,
      rounds: 7,
      warmup: 1,
    }),
    1.5,
  );
  const wired = await onTheWire(workload(spread(gate, IN_FLIGHT), 'wire_', IN_FLIGHT), 320);
  const wiredByHand = await onTheWire(workload(hand, 'wire_hand_', IN_FLIGHT), 320);
  console.log(
    `  what a call sends PostgreSQL: gate ${wired.statements.toFixed(2)} statements, ${(wired.bytes / 1024).toFixed(1)} KB; by hand ${wiredByHand.statements.toFixed(2)}, ${(wiredByHand.bytes / 1024).toFixed(1)} KB`,
  );
  await gate.close();
  await ledger.close();
  const gated = await twoAppServers(database, 'gate');
  // The same, for the hand-written server: what a second process can add at all on this machine
  // (its cores, and the PostgreSQL beside it).
  const byHandTwice = await twoAppServers(database, 'hand');
  const ok = gated >= 1.8;
  console.log(
    `two / one throughput: server gate ${gated.toFixed(2)}×, hand-written server ${byHandTwice.toFixed(2)}×  (target ≥ 1.8× for the gate) ${ok ? 'ok' : 'MISSED'}`,
  );
  if (!ok) failures.push('two app servers');
});
if (!reached) failures.push('PostgreSQL');

await memory();

/**
 * Two app servers, each a process with its own pool and each with 16 calls in flight, against one
 * such server alone: what a second server adds, as a median ratio. `kind` is 'gate' (a server gate
 * each) or 'hand' (the hand-written server). Rounds alternate which goes first.
 */
async function twoAppServers(url, kind) {
  const start = () => {
    const child = fork(new URL('./server-instance.mjs', import.meta.url), [url, kind], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const replies = [];
    let waiting;
    child.on('message', (message) =>
      waiting ? (waiting(message), (waiting = undefined)) : replies.push(message),
    );
    const next = () =>
      replies.length > 0 ? Promise.resolve(replies.shift()) : new Promise((resolve) => (waiting = resolve));
    return {
      ready: next(),
      async run(prefix, n) {
        child.send({ run: n, prefix, inFlight: IN_FLIGHT });
        const reply = await next();
        if (reply.error) throw new Error(reply.error);
        return reply.ms;
      },
      close: () => new Promise((resolve) => (child.once('exit', resolve), child.send({ close: true }))),
    };
  };
  const servers = [start(), start()];
  try {
    await Promise.all(servers.map((s) => s.ready));
    const n = 240;
    const rounds = 5;
    const ones = [];
    const twos = [];
    const ratios = [];
    for (let round = 0; round <= rounds; round++) {
      const alone = async () => (n / (await servers[0].run(`${kind}one${round}`, n))) * 1000;
      const both = async () => {
        const t0 = performance.now();
        await Promise.all(servers.map((s, i) => s.run(`${kind}two${round}_${i}`, n)));
        return ((2 * n) / (performance.now() - t0)) * 1000;
      };
      const [one, two] =
        round % 2 === 0
          ? [await alone(), await both()]
          : await both().then(async (two) => [await alone(), two]);
      if (round === 0) continue; // warm-up
      ones.push(one);
      twos.push(two);
      ratios.push(two / one);
    }
    const label = kind === 'gate' ? 'server gate' : 'hand-written server';
    console.log(
      `\ntwo app servers (processes) on one PostgreSQL, each with ${IN_FLIGHT} calls in flight: ${label}`,
    );
    console.log(`one app server  ${median(ones).toFixed(0).padStart(6)} calls/s`);
    console.log(`two app servers ${median(twos).toFixed(0).padStart(6)} calls/s`);
    return median(ratios);
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
}

/**
 * What `run(n)` sends PostgreSQL per call: statements (every query goes through `pg.Client`) and
 * bytes written to sockets (this process's only sockets then are its pools' connections). On a
 * machine where a socket write is costly, bytes on the wire are much of a call's CPU.
 */
async function onTheWire(run, n) {
  const query = pg.Client.prototype.query;
  const write = Socket.prototype.write;
  let statements = 0;
  let bytes = 0;
  pg.Client.prototype.query = function (...args) {
    statements++;
    return query.apply(this, args);
  };
  Socket.prototype.write = function (chunk, ...rest) {
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    return write.call(this, chunk, ...rest);
  };
  try {
    await run(n);
  } finally {
    pg.Client.prototype.query = query;
    Socket.prototype.write = write;
  }
  return { statements: statements / n, bytes: bytes / n };
}

/** The gate's heap after 10,000 and after 100,000 settled calls: records live in the ledger, not in the process. */
async function memory() {
  console.log(
    '\nserver gate memory: heap after settled calls (SQLite in memory, so the database is not on the heap)',
  );
  const ledger = await sqliteLedger({ path: ':memory:' });
  const gate = createServerGate({ tools: [transfer], ledger, recover: false });
  const one = throughGate(gate);
  const heap = () => {
    globalThis.gc?.();
    globalThis.gc?.();
    return process.memoryUsage().heapUsed;
  };
  await drive(one, 'mem_a', 10_000);
  const at10k = heap();
  await drive(one, 'mem_b', 90_000);
  const at100k = heap();
  await gate.close();
  await ledger.close();
  const perCall = (at100k - at10k) / 90_000;
  const ok = perCall <= 16;
  const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(
    `heap after 10,000 calls ${mb(at10k)}, after 100,000 ${mb(at100k)}: ${perCall.toFixed(1)} bytes per call  (target ≤ 16 B per call: flat) ${ok ? 'ok' : 'MISSED'}`,
  );
  if (!ok) failures.push('memory');
}

process.exit(failures.length === 0 ? 0 : 1);
