// The cost of policy in the ledger: the server gate per call with three budgets configured (money
// per principal, calls per session, calls per tool, each decided in the transaction that starts
// the call) against the same gate with none, on an SQLite file and on PostgreSQL. Both gates share
// one ledger, and their rounds are interleaved, so the ratio is measured in this run.
import { compareAsync, report } from './measure.mjs';
import {
  drive,
  server,
  throughGate,
  transfer,
  withScratchDatabase,
  withScratchFile,
} from './server-workload.mjs';

const { createServerGate, postgresLedger, sqliteLedger } = server;
const TARGET = 1.2;
const failures = [];
const DAY = 86_400_000;
// Room for every call the bench makes: the budgets are decided on each call, and never refuse one.
const ROOM = 1e15;
const budgets = [
  {
    name: 'money_per_principal',
    per: 'principal',
    windowMs: DAY,
    max: ROOM,
    measure: (input) => input.amount_cents,
  },
  { name: 'calls_per_session', per: 'session', windowMs: DAY, max: ROOM },
  { name: 'calls_per_tool', tools: ['transfer'], per: 'tool', windowMs: 3_600_000, max: ROOM },
];

function workload(gate, prefix) {
  const one = throughGate(gate);
  let round = 0;
  return (n) => drive(one, `${prefix}${round++}`, n, 1);
}

async function measure(label, ledger) {
  const plain = createServerGate({ tools: [transfer], ledger, recover: false });
  const budgeted = createServerGate({ tools: [transfer], ledger, recover: false, budgets });
  // The lower quartile of each side: on a shared machine a round that waited for a core or a disk
  // flush is slow for reasons that are not the budgets.
  const result = await compareAsync({
    subject: workload(budgeted, 'budget'),
    baseline: workload(plain, 'plain'),
    n: 100,
    statistic: 'quartile',
  });
  if (!report(`${label}: three budgets vs none, per call`, result, TARGET)) failures.push(label);
  await budgeted.close();
  await plain.close();
}

console.log('\nserver gate with budgets: per call, three budgets against none, on one ledger');

await withScratchFile('toolgate-policy-bench', async (path) => {
  const ledger = await sqliteLedger({ path });
  await measure('SQLite file', ledger);
  await ledger.close();
});

const reached = await withScratchDatabase('tg_policy_bench', async (database) => {
  const ledger = await postgresLedger({ connectionString: database });
  await measure('PostgreSQL', ledger);
  await ledger.close();
});
if (!reached) failures.push('PostgreSQL');

if (failures.length > 0) {
  console.log(`policy bench MISSED: ${failures.join(', ')}`);
  process.exitCode = 1;
}
