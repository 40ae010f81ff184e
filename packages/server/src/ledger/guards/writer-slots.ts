/**
 * A bound on how many transactions of one ledger object run at once. On PostgreSQL every write
 * that appends to the chain waits for the one chain-head row lock while holding a pool
 * connection: without a bound, a burst of writes takes every connection of the pool and the
 * reads (a snapshot, a feed catching up, `get`) wait for the lock too. Writers beyond the bound
 * wait here, holding nothing, and the pool keeps connections for reads.
 *
 * @example
 * const slots = writerSlots(5);
 * const result = await slots.run(() => db.transaction().execute(work));
 */
export interface WriterSlots {
  readonly run: <T>(work: () => Promise<T>) => Promise<T>;
}

/**
 * Makes the slots; `size` at least 1.
 *
 * @example
 * const slots = writerSlots(Math.max(1, Math.floor(poolMax / 2)));
 */
export function writerSlots(size: number): WriterSlots {
  let free = Math.max(1, Math.floor(size));
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next !== undefined) next();
    else free += 1;
  };
  return {
    async run(work) {
      if (free > 0) free -= 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await work();
      } finally {
        release();
      }
    },
  };
}
