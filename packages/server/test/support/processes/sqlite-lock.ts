// Holds SQLite's write lock on a file (BEGIN IMMEDIATE), as another program using the same file
// would, until told to let it go.
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';

const [path = ''] = process.argv.slice(2);
const database = new Database(path);
database.exec('begin immediate');
console.log(JSON.stringify({ holding: true }));
createInterface({ input: process.stdin }).on('line', () => {
  database.exec('rollback');
  database.close();
  console.log(JSON.stringify({ released: true }));
  process.exit(0);
});
