/**
 * Runs this process's work on one call at a time, in the order asked, while work on other calls
 * goes on beside it; a failed piece of work does not stop the next.
 *
 * @example
 * const queue = createCallQueue();
 * await queue.exclusive('call_1', () => ledger.transaction(move));
 */
export interface CallQueue {
  readonly exclusive: <T>(id: string, work: () => Promise<T>) => Promise<T>;
  /** Whether work on `id` is running or waiting. */
  readonly busy: (id: string) => boolean;
}

/**
 * Builds a queue that holds nothing for a call once its work has ended.
 *
 * @example
 * const queue = createCallQueue();
 */
export function createCallQueue(): CallQueue {
  const tails = new Map<string, Promise<unknown>>();
  return {
    exclusive<T>(id: string, work: () => Promise<T>): Promise<T> {
      const before = tails.get(id) ?? Promise.resolve();
      const run = before.then(work, work);
      const tail = run.catch(() => undefined);
      tails.set(id, tail);
      void tail.then(() => {
        if (tails.get(id) === tail) tails.delete(id);
      });
      return run;
    },
    busy: (id) => tails.has(id),
  };
}
