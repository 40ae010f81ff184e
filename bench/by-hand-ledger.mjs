// The hand-written gateway's ledger: for each call a proposal row committed before it goes upstream
// and its end row committed after the answer, on an SQLite file opened as the ledger opens it
// (better-sqlite3, WAL, synchronous=FULL: a flush each). mcp-by-hand.mjs runs it behind the MCP hop;
// mcp.bench.mjs also runs it in its own process around the same upstream call, as it runs the server
// gate alone: the durable work of each side without the MCP hop.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(fileURLToPath(new URL('../packages/mcp/', import.meta.url)));
const Database = require('better-sqlite3');

/** Opens (creating it) the hand-written ledger at `path`. */
export function openByHandLedger(path) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`create table if not exists calls (
    id text primary key, tool text not null, input text not null, status text not null,
    output text, created_at integer not null, updated_at integer not null)`);
  const propose = db.prepare(
    "insert into calls (id, tool, input, status, created_at, updated_at) values (?, ?, ?, 'executing', ?, ?)",
  );
  const end = db.prepare('update calls set status = ?, output = ?, updated_at = ? where id = ?');
  return {
    /** The first commit: the call, before it runs. */
    propose: (id, name, args) => propose.run(id, name, JSON.stringify(args), Date.now(), Date.now()),
    /** The second commit: how it ended, with what it returned. */
    end: (id, status, output) => end.run(status, JSON.stringify(output), Date.now(), id),
    close: () => db.close(),
  };
}
