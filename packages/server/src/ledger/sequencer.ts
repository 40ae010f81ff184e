/**
 * Chains pending events after their moves commit (PostgreSQL): one pass at a time in this
 * process, each pass one transaction that waits for the chain lock, so that many moves committed
 * meanwhile are chained together.
 *
 * @example
 * const sequencer = createSequencer({ pass: () => transactions.transaction((trx) => chain.sequence(trx, BATCH)), batch: BATCH, anyPending, onError });
 * sequencer.kick();          // a move just committed an event pending
 * await sequencer.flush();   // before a read that must see every committed move
 */
export interface Sequencer {
  /** A move of this ledger object committed events pending: chain them soon. */
  readonly kick: () => void;
  /** Resolves once a pass that began after this call has ended: what was committed before it is chained (or the pass failed). */
  readonly chained: () => Promise<void>;
  /** Chains whatever is pending, from this process or any other, and resolves once it is chained. */
  readonly flush: () => Promise<void>;
}

/**
 * What the sequencer runs: one pass (answers how many events it chained), the most a pass
 * chains, and a cheap look whether anything is pending at all.
 *
 * @example
 * const options: SequencerOptions = { pass, batch: 500, anyPending: async () => false, onError: console.error };
 */
export interface SequencerOptions {
  readonly pass: () => Promise<number>;
  readonly batch: number;
  readonly anyPending: () => Promise<boolean>;
  readonly onError: (error: unknown) => void;
  /** The ledger is closing: no pass starts, and one refused for it is no error (its events stay pending, for the next pass of any ledger object). */
  readonly closing: () => boolean;
}

/**
 * Builds the sequencer of one ledger object.
 *
 * @example
 * const sequencer = createSequencer(options);
 */
export function createSequencer({ pass, batch, anyPending, onError, closing }: SequencerOptions): Sequencer {
  let running: Promise<void> | undefined;
  let again = false;
  // Passes are numbered as they begin; a waiter waits for the first one that began after it asked.
  let begun = 0;
  const waiters: { readonly pass: number; readonly resolve: () => void }[] = [];
  const ended = (upTo: number) => {
    for (let i = waiters.length - 1; i >= 0; i -= 1) {
      const waiter = waiters[i] as (typeof waiters)[number];
      if (waiter.pass > upTo) continue;
      waiters.splice(i, 1);
      waiter.resolve();
    }
  };

  // A kick while a pass runs asks for one more pass after it, which takes every move committed
  // before it began: kicks coalesce, and no committed event is left behind.
  async function loop(): Promise<void> {
    try {
      while (again && !closing()) {
        again = false;
        const number = (begun += 1);
        const chained = await pass();
        ended(number);
        if (chained >= batch) again = true;
      }
    } catch (error) {
      // The events stay pending, durable with their moves: the next pass (a later move's, a
      // read's) chains them.
      again = false;
      if (!closing()) onError(error);
    } finally {
      running = undefined;
      ended(Infinity);
    }
  }

  const kick = () => {
    again = true;
    if (running !== undefined) return;
    // Started on the next microtask, so that `running` is set before the loop can end.
    running = Promise.resolve().then(loop);
  };

  const chained = () => {
    // The pass running now may have read the pending events before this commit: wait for the next.
    const waiting = new Promise<void>((resolve) => waiters.push({ pass: begun + 1, resolve }));
    kick();
    return waiting;
  };

  return {
    kick,
    chained,
    async flush() {
      if (running === undefined && !(await anyPending())) return;
      await chained();
    },
  };
}
