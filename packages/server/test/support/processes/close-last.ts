// A program whose last work is closing its SQLite ledger: `sqliteLedger({ path })` with enough
// commits that the ledger's checkpoints run, then `await ledger.close()` at the top level, then a line.
import { sqliteLedger } from '../../../src/index.ts';

const [path, commits] = process.argv.slice(2);
const ledger = await sqliteLedger({ path: String(path) });
for (let i = 0; i < Number(commits); i++)
  await ledger.transaction((trx) => trx.selectFrom('toolgate_calls').select('id').execute());
await ledger.close();
console.log(JSON.stringify({ closed: true }));
