import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Checkpoints of a SQLite ledger file's write-ahead log, moved to the moments the ledger is quiet.
 *
 * SQLite's own automatic checkpoint runs inside the commit that crosses its threshold: that
 * commit, and every request waiting behind it on the event loop, waits for the log's pages to be
 * copied into the database and the database flushed. Here a worker thread with its own connection
 * does it (PASSIVE: it never blocks a writer) once no commit came for `idleMs`; the log, copied in
 * full, then starts over at the next commit. While commits never pause that long, the ledger's own
 * connection still checkpoints once the log holds `backstopPages` pages, as SQLite would: the log
 * is bounded either way. (A worker checkpoint between busy commits would not help: the log starts
 * over only if nothing was committed while it ran, and its flushes would slow the commits' own.)
 * Checkpoints change nothing of durability: a commit is durable once its log is flushed.
 *
 * @example
 * const checkpoints = sqliteCheckpoints(path, (pages) => database.pragma(`wal_autocheckpoint = ${pages}`));
 * checkpoints.committed(); // after each commit
 * await checkpoints.stop(); // before the connection closes, so it is the last and removes the log
 */
export interface SqliteCheckpoints {
  /** Counts a commit; starts the worker once `startAfter` commits were made. Costs no message. */
  readonly committed: () => void;
  /** Stops the worker and closes its connection. */
  readonly stop: () => Promise<void>;
}

/** Commits before the worker starts: a ledger that commits less never needs one. */
const START_AFTER = 100;
const IDLE_MS = 100;
/** The log's bound while commits never pause: twice SQLite's default (8 MB of 4 KB pages). */
export const BACKSTOP_PAGES = 2000;
const SQLITE_DEFAULT_PAGES = 1000;

// Plain CommonJS, run as the worker's script. state[0] counts commits since the last checkpoint,
// state[1] asks the worker to stop; the ledger's thread wakes the worker only when the count
// leaves 0 (so that it starts watching for a pause), never once per commit.
const WORKER = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const { path, idleMs } = workerData;
const state = new Int32Array(workerData.state);
const db = new Database(path, { timeout: 0, fileMustExist: true });
for (;;) {
  if (Atomics.load(state, 1) !== 0) break;
  const seen = Atomics.load(state, 0);
  const woke = Atomics.wait(state, 0, seen, seen === 0 ? Infinity : idleMs);
  if (woke !== 'timed-out' || seen === 0 || Atomics.load(state, 0) !== seen) continue;
  Atomics.sub(state, 0, seen);
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or gone: the next one, or the ledger's own backstop, copies what this one did not.
  }
}
db.close();
`;

/**
 * Starts counting commits of the SQLite file at `path`; `setAutocheckpoint` sets the ledger's own
 * connection's threshold (the backstop, or SQLite's default back if the worker fails).
 *
 * @example
 * const checkpoints = sqliteCheckpoints('./toolgate.db', (pages) => database.pragma(`wal_autocheckpoint = ${pages}`));
 */
export function sqliteCheckpoints(
  path: string,
  setAutocheckpoint: (pages: number) => void,
  { idleMs = IDLE_MS, startAfter = START_AFTER }: { idleMs?: number; startAfter?: number } = {},
): SqliteCheckpoints {
  const state = new Int32Array(new SharedArrayBuffer(8));
  let worker: Worker | undefined;
  let exited: Promise<void> | undefined;
  let failed = false;
  let commits = 0;
  setAutocheckpoint(BACKSTOP_PAGES);

  // Without the worker, SQLite checkpoints on its own again, as it would by default.
  const fallBack = () => {
    failed = true;
    try {
      setAutocheckpoint(SQLITE_DEFAULT_PAGES);
    } catch {
      // The connection is closed: nothing is left to checkpoint.
    }
  };

  const start = () => {
    let started: Worker;
    try {
      const driver = createRequire(import.meta.url).resolve('better-sqlite3');
      started = new Worker(WORKER, {
        eval: true,
        workerData: { driver, path, idleMs, state: state.buffer },
      });
    } catch {
      fallBack();
      return;
    }
    started.unref();
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    started.once('error', fallBack);
    worker = started;
  };

  return {
    committed() {
      if (worker === undefined && !failed && ++commits === startAfter) start();
      if (Atomics.add(state, 0, 1) === 0 && worker !== undefined) Atomics.notify(state, 0);
    },
    async stop() {
      Atomics.store(state, 1, 1);
      Atomics.notify(state, 0);
      // Unref'd, the worker keeps nothing alive; waiting for it must, or a program whose last work
      // is closing its ledger ends (exit code 13) before the worker has closed its connection.
      worker?.ref();
      await exited;
    },
  };
}
