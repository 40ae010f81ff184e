// An app server: opens the ledger given as `sqlite:<path>` or `postgres:<url>`, appends `count`
// events for calls named `<prefix>_<n>`, one transaction each, then closes it.
import { postgresLedger, sqliteLedger } from '../../../src/index.ts';
import { move } from '../events.ts';

const [where = '', prefix = 'p', count = '10'] = process.argv.slice(2);
const ledger = where.startsWith('sqlite:')
  ? await sqliteLedger({ path: where.slice('sqlite:'.length) })
  : await postgresLedger({ connectionString: where.slice('postgres:'.length) });
console.log(JSON.stringify({ opened: true }));
const seqs: number[] = [];
for (let n = 1; n <= Number(count); n += 1) {
  const event = await ledger.transaction(async (trx) => {
    const appended = await ledger.appendEvent(trx, move(n, { callId: `${prefix}_${n}` }));
    // More work while the chain head is held, so that the other process has to wait its turn.
    await trx.selectFrom('toolgate_events').select('seq').where('call_id', '=', appended.callId).execute();
    return appended;
  });
  seqs.push(event.seq);
}
await ledger.close();
console.log(JSON.stringify({ seqs }));
