// Opens the ledger, appends an event and writes a call row in one transaction, says so, and then
// never commits: the test kills it there.
import { postgresLedger, sqliteLedger } from '../../../src/index.ts';
import { callRow, move } from '../events.ts';

const [where = ''] = process.argv.slice(2);
const ledger = where.startsWith('sqlite:')
  ? await sqliteLedger({ path: where.slice('sqlite:'.length) })
  : await postgresLedger({ connectionString: where.slice('postgres:'.length) });
await ledger.transaction(async (trx) => {
  await ledger.appendEvent(trx, move(1, { callId: 'call_held' }));
  await trx.insertInto('toolgate_calls').values(callRow('call_held')).execute();
  console.log(JSON.stringify({ holding: true }));
  await new Promise(() => setInterval(() => undefined, 60_000));
});
