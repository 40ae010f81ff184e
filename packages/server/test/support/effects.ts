import Database from 'better-sqlite3';

/** One run of a tool's side effect, as the world outside the ledger saw it. */
export interface EffectRow {
  readonly call_id: string;
  readonly tool: string;
  readonly idempotency_key: string;
  /** 1 for the first run of the call's effect, 2 for the second… */
  readonly run_no: number;
  readonly pid: number;
}

/** The outside world a test's tools act on: a SQLite file of its own, beside the ledger's database. */
export interface Effects {
  /** Records one run of `call`'s effect; durable on disk when it returns. */
  readonly record: (callId: string, tool: string, idempotencyKey: string) => void;
  readonly rows: () => EffectRow[];
  readonly close: () => void;
}

/**
 * Opens (creating it if needed) the effects file at `path`. Each record is its own transaction,
 * synced to disk before `record` returns, and written outside every ledger transaction: once a
 * tool has recorded its effect, no crash and no rollback can take it back, like a payment a
 * provider has taken.
 */
export function openEffects(path: string): Effects {
  const database = new Database(path, { timeout: 10_000 });
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.exec(
    'create table if not exists effects (call_id text not null, tool text not null, idempotency_key text not null, run_no integer not null, pid integer not null)',
  );
  const insert = database.prepare(
    'insert into effects (call_id, tool, idempotency_key, run_no, pid) select ?, ?, ?, count(*) + 1, ? from effects where call_id = ?',
  );
  return {
    record: (callId, tool, idempotencyKey) =>
      void insert.run(callId, tool, idempotencyKey, process.pid, callId),
    rows: () => database.prepare('select * from effects order by rowid').all() as EffectRow[],
    close: () => database.close(),
  };
}
