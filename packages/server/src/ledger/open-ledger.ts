import { Migrator, type Kysely } from 'kysely';
import { BATCH, createChainAppender } from './chain/chain-append.ts';
import { chainHasher, type ChainHasher } from './chain/chain.ts';
import { createCommitSignal } from './commits.ts';
import { unavailable } from './error.ts';
import type {
  LedgerEvent,
  Ledger,
  LedgerBackend,
  LedgerMove,
  LedgerOptions,
  NewLedgerEvent,
  OwnCommit,
} from './ledger.ts';
import { migrations } from './migrations.ts';
import { createEventReads } from './reads.ts';
import { createSequencer } from './sequencer.ts';
import type { LedgerDatabase } from './schema.ts';
import { createTransactions, type Head } from './transactions.ts';

/**
 * Applies the migrations, then builds the ledger over a dialect's backend. Closes the backend
 * and throws if the database cannot be used.
 *
 * @example
 * return openLedger(backend, options);
 */
export async function openLedger(backend: LedgerBackend, options: LedgerOptions): Promise<Ledger> {
  const { db, dialect } = backend;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const hasher = chainHasher(options.auditKey);
  let head: Head;
  try {
    // Another connection may hold the database's lock meanwhile (another process opening it too).
    for (const started = Date.now(); ;) {
      try {
        await migrate(db);
        break;
      } catch (error) {
        if (backend.failure(error)?.kind !== 'retry' || Date.now() - started > (backend.lockWaitMs ?? 0))
          throw error;
        await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
      }
    }
    head = await openingHead(db, hasher);
  } catch (error) {
    await backend.close().catch(() => undefined);
    const failure = backend.failure(error);
    throw failure ? unavailable(failure, error, 'opening') : error;
  }

  let closing: Promise<void> | undefined;
  // This object's own NOTIFY may reach its LISTEN connection before its commit returns: a seq it
  // is committing is delivered from the commit itself, with no read. Each statement that chains
  // notifies its last seq, so a transaction that chained twice is known by every seq it chained.
  const committing = new Set<number>();
  const seqsOf = ({ moves, notes }: OwnCommit) => [
    ...moves.map((move) => move.event.seq),
    ...notes.map((note) => note.seq),
  ];
  const watch: LedgerBackend['watch'] = (wake) =>
    backend.watch((seq) => (seq !== undefined && committing.has(seq) ? undefined : wake(seq)));
  const commits = createCommitSignal({ watch }, onError);
  const transactions = createTransactions(backend, {
    sealing: (state) => {
      for (const seq of seqsOf(state)) committing.add(seq);
    },
    committed: (state) => {
      chain.committed(state);
      // A transaction that only left events pending has nothing to tell yet: the sequencer will.
      if (state.head !== undefined || !state.pending) commits.wake(movesAfterNotes(state), state);
      if (state.pending) sequencer.kick();
    },
    ended: (state) => {
      for (const seq of seqsOf(state)) committing.delete(seq);
    },
    // A move that left its event pending returns once it has committed, without waiting for the
    // pass that chains it: its call's next move leaves its event pending after it, and is chained
    // after it. Waiting made every move under load cost a commit and a pass of the sequencer.
  });
  const chain = createChainAppender({ dialect, hasher, stateOf: transactions.stateOf, head });
  const sequencer = createSequencer({
    pass: () => transactions.transaction((trx) => chain.sequence(trx, BATCH)),
    batch: BATCH,
    anyPending: async () =>
      dialect === 'postgres' &&
      (await transactions.read('ledger.read', () =>
        db.selectFrom('toolgate_pending').select('id').limit(1).executeTakeFirst(),
      )) !== undefined,
    onError,
    closing: () => closing !== undefined,
  });
  // Reads that promise every committed move see the pending ones chained first.
  const reads = createEventReads(db, transactions.read, hasher, sequencer.flush);

  return {
    dialect,
    db,
    read: <T>(query: (db: Kysely<LedgerDatabase>) => Promise<T>) =>
      transactions.read('ledger.read', () => query(db)),
    transaction: transactions.transaction,
    appendEvent: async (trx, event: NewLedgerEvent) => (await chain.append(trx, [event]))[0] as LedgerEvent,
    appendEvents: chain.append,
    recordEvents: chain.record,
    recordWith: chain.recordWith,
    ...reads,
    begin: transactions.begin,
    inApp: transactions.inApp,
    onCommitted: commits.onCommitted,
    close() {
      closing ??= (async () => {
        commits.close();
        await transactions.drain();
        await backend.close();
      })();
      return closing;
    },
  };
}

/**
 * The moves a listener that knows no notes is given: those after the commit's last note, which it
 * sees as a gap (and reads the ledger) when it needs the ones before.
 */
function movesAfterNotes({ moves, notes }: OwnCommit): readonly LedgerMove[] {
  const last = notes[notes.length - 1]?.seq;
  return last === undefined ? moves : moves.filter((move) => move.event.seq > last);
}

async function migrate(db: Kysely<LedgerDatabase>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
    migrationTableName: 'toolgate_migrations',
    migrationLockTableName: 'toolgate_migration_lock',
    // Each migration makes tables of its own: one numbered below another already applied (made on
    // another branch of work) still applies.
    allowUnorderedMigrations: true,
  });
  const { error } = await migrator.migrateToLatest();
  if (error !== undefined) throw error;
}

/**
 * The chain's head as the ledger opens, for its first moves to chain after without reading it
 * (another writer may move it on meanwhile: the guarded append then reads it). A chain written
 * with one algorithm is never extended with another.
 */
async function openingHead(db: Kysely<LedgerDatabase>, hasher: ChainHasher): Promise<Head> {
  const head = await db
    .selectFrom('toolgate_chain')
    .select(['last_seq', 'last_hash', 'algorithm'])
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  if (head.last_seq > 0 && head.algorithm !== hasher.algorithm) {
    throw new Error(
      hasher.algorithm === 'sha256'
        ? 'This ledger’s audit chain is keyed (HMAC-SHA256): open it with the auditKey it was written with.'
        : 'This ledger’s audit chain was written without an auditKey: open it without one, or start a new ledger to key its chain.',
    );
  }
  return { seq: head.last_seq, hash: head.last_hash };
}
