import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { ControlledTransaction, Transaction } from 'kysely';
import { writerSlots } from './guards/writer-slots.ts';
import { closedLedger, unavailable } from './error.ts';
import type { HeldTransaction, LedgerBackend, LedgerEvent, LedgerMove } from './ledger.ts';
import type { LedgerDatabase } from './schema.ts';

/** The last event of the chain: its seq and hash. */
export interface Head {
  readonly seq: number;
  readonly hash: string;
}

/**
 * What the ledger knows of a transaction it runs: whether it appended (chained or left pending),
 * the head it left, and its moves. Read anywhere; changed only by the functions below, which name
 * what happened in the transaction.
 */
export interface TransactionState {
  readonly appended: boolean;
  /** It left events pending (PostgreSQL, the chain was busy): the sequencer chains them once it commits. */
  readonly pending: boolean;
  readonly head: Head | undefined;
  /** The events it chained that hold a record, with it. */
  readonly moves: readonly LedgerMove[];
  /** The events it chained that hold none (a refusal, a note such as a delivery): with `moves`, every event it chained. */
  readonly notes: readonly LedgerEvent[];
}

type WritableState = { -readonly [K in keyof TransactionState]: TransactionState[K] } & {
  moves: LedgerMove[];
  notes: LedgerEvent[];
};

/** A transaction that has appended nothing yet. */
export function newTransactionState(): TransactionState {
  return { appended: false, pending: false, head: undefined, moves: [], notes: [] };
}

/** Events were chained in the transaction, the last at `head`: those with a record as moves, the others as notes. */
export function chainedIn(
  state: TransactionState,
  head: Head,
  moves: readonly LedgerMove[],
  notes: readonly LedgerEvent[],
): void {
  const writable = state as WritableState;
  writable.appended = true;
  writable.head = head;
  writable.moves.push(...moves);
  writable.notes.push(...notes);
}

/** The transaction left its events pending for the sequencer (PostgreSQL, the chain was busy). */
export function leftPendingIn(state: TransactionState): void {
  const writable = state as WritableState;
  writable.appended = true;
  writable.pending = true;
}

/** The transaction took the chain and chained everything pending, its own events among them. */
export function pendingChainedIn(state: TransactionState): void {
  (state as WritableState).pending = false;
}

/** The transaction read the chain's head without moving it: the head to expect next, unless it moves it. */
export function headReadIn(state: TransactionState, head: Head): void {
  (state as WritableState).head ??= head;
}

/**
 * The ledger's transactions and reads: each one tracked (so `close()` can wait for it), refused
 * once the ledger closes or when asked for inside another transaction, retried on a lock conflict,
 * and its driver errors read as `LedgerError`s.
 *
 * @example
 * const transactions = createTransactions(backend, { committed: (state) => wake(state.moves) });
 * await transactions.transaction(async (trx) => trx.insertInto('toolgate_sessions').values(row).execute());
 */
export interface Transactions {
  readonly read: <T>(what: string, query: () => Promise<T>) => Promise<T>;
  readonly transaction: <T>(work: (trx: Transaction<LedgerDatabase>) => Promise<T>) => Promise<T>;
  readonly begin: () => Promise<HeldTransaction>;
  /** Runs app code that a transaction awaits: a transaction or read it starts is refused (see `Ledger.inApp`). */
  readonly inApp: <T>(code: () => Promise<T>) => Promise<T>;
  /** The state of a transaction this ledger runs, or `undefined` for any other. */
  readonly stateOf: (trx: Transaction<LedgerDatabase>) => TransactionState | undefined;
  /** Refuses everything from now on, and resolves once every running transaction and read has ended. */
  readonly drain: () => Promise<void>;
}

const ATTEMPTS = 5;
const LONGEST_PAUSE_MS = 100;

/**
 * What the ledger hears of the transactions that chained events: right before each one commits
 * (`sealing`, with the head it will leave), after it committed, and once it has ended either way.
 *
 * @example
 * const hooks: TransactionHooks = { sealing: (state) => expect(state.head), committed: wake, ended: (state) => forget(state.head) };
 */
export interface TransactionHooks {
  readonly sealing?: (state: TransactionState) => void;
  readonly committed: (state: TransactionState) => void;
  readonly ended?: (state: TransactionState) => void;
}

/**
 * Builds the ledger's transactions over a backend; `committed` runs after each commit.
 *
 * @example
 * const transactions = createTransactions(backend, { committed: onCommit });
 */
export function createTransactions(
  backend: LedgerBackend,
  { sealing, committed, ended }: TransactionHooks,
): Transactions {
  const { db } = backend;
  // The transactions that are open right now, each with what it appended.
  const open = new WeakMap<Transaction<LedgerDatabase>, TransactionState>();
  const app = appCode();
  const inflight = new Set<Promise<unknown>>();
  const slots = writerSlots(backend.writers ?? Number.POSITIVE_INFINITY);
  let closing = false;

  const refusal = (what: string): Error | undefined => {
    if (closing) return closedLedger();
    if (app.running()) {
      return new Error(
        `${what} was called by code a ledger transaction awaits (a tool's \`approvers\`): it may not use the ledger, as on SQLite it would wait forever for the connection that transaction holds.`,
      );
    }
    return undefined;
  };

  const track = <T>(promise: Promise<T>): Promise<T> => {
    inflight.add(promise);
    const settle = () => inflight.delete(promise);
    promise.then(settle, settle);
    return promise;
  };

  const asWriteError = (error: unknown): unknown => {
    const failure = backend.failure(error);
    return failure ? unavailable(failure, error, 'writing') : error;
  };

  const read = <T>(what: string, query: () => Promise<T>): Promise<T> => {
    const refused = refusal(what);
    if (refused) return Promise.reject(refused);
    return track(
      query().catch((error: unknown) => {
        const failure = backend.failure(error);
        throw failure ? unavailable(failure, error, 'reading') : error;
      }),
    );
  };

  const attempt = async <T>(
    work: (trx: Transaction<LedgerDatabase>) => Promise<T>,
    state: TransactionState,
  ): Promise<T> =>
    db.transaction().execute(async (trx) => {
      open.set(trx, state);
      try {
        const result = await work(trx);
        if (state.appended) sealing?.(state);
        return result;
      } finally {
        open.delete(trx);
      }
    });

  const transaction = <T>(work: (trx: Transaction<LedgerDatabase>) => Promise<T>): Promise<T> => {
    const refused = refusal('ledger.transaction');
    if (refused) return Promise.reject(refused);
    return track(
      (async () => {
        const started = Date.now();
        for (let tries = 1; ; tries += 1) {
          const state = newTransactionState();
          try {
            const result = await slots.run(() => attempt(work, state));
            if (state.appended) {
              committed(state);
              ended?.(state);
            }
            return result;
          } catch (error) {
            if (state.appended) ended?.(state);
            const failure = backend.failure(error);
            if (
              failure?.kind === 'retry' &&
              (tries < ATTEMPTS || Date.now() - started < (backend.lockWaitMs ?? 0))
            ) {
              // The wait is a timer, never the driver's: the event loop goes on serving meanwhile.
              await delay(Math.min(LONGEST_PAUSE_MS, 2 ** tries * (5 + Math.random() * 5)));
              continue;
            }
            throw failure ? unavailable(failure, error, 'writing') : error;
          }
        }
      })(),
    );
  };

  const begin = async (): Promise<HeldTransaction> => {
    const refused = refusal('ledger.begin');
    if (refused) throw refused;
    let held: ControlledTransaction<LedgerDatabase>;
    try {
      held = await db.startTransaction().execute();
    } catch (error) {
      throw asWriteError(error);
    }
    const state = newTransactionState();
    open.set(held, state);
    let ending: Promise<void> | undefined;
    const end = (how: 'commit' | 'rollback') =>
      (ending ??= track(
        (async () => {
          open.delete(held);
          if (how === 'commit' && state.appended) sealing?.(state);
          try {
            await (how === 'commit' ? held.commit() : held.rollback()).execute();
          } catch (error) {
            if (how === 'commit')
              await held
                .rollback()
                .execute()
                .catch(() => undefined);
            throw asWriteError(error);
          } finally {
            if (state.appended) ended?.(state);
          }
          if (how === 'commit' && state.appended) committed(state);
        })(),
      ));
    return { trx: held, commit: () => end('commit'), rollback: () => end('rollback') };
  };

  return {
    read,
    transaction,
    begin,
    inApp: app.inApp,
    stateOf: (trx) => open.get(trx),
    async drain() {
      closing = true;
      await Promise.allSettled([...inflight]);
    },
  };
}

/**
 * Whether the code running now is app code a transaction awaits, to refuse a transaction or a read
 * it starts: on SQLite it would wait forever for the connection the awaiting one holds. Tracking
 * it makes every promise of the process pay a hook, so it is on only while such code runs; the
 * gate's own work inside a transaction passes its `trx` and never starts another.
 */
function appCode(): {
  readonly inApp: <T>(code: () => Promise<T>) => Promise<T>;
  readonly running: () => boolean;
} {
  const within = new AsyncLocalStorage<{ running: boolean }>();
  let hosting = 0;
  return {
    async inApp(code) {
      const context = { running: true };
      hosting += 1;
      try {
        return await within.run(context, code);
      } finally {
        // Code it started that runs later (a timer, an answer that came too late) is not awaited.
        context.running = false;
        if (--hosting === 0) within.disable();
      }
    },
    running: () => within.getStore()?.running === true,
  };
}
