import type { PostgresLedgerClient, PostgresLedgerPool } from '../ledger.ts';

type Callback = (error: Error | undefined, client: PostgresLedgerClient | undefined) => void;

/**
 * Takes a client from the pool with `listener` already attached to its `'error'` event. pg's pool
 * stops listening for a client's errors as it hands it out, and pg reads every message of a
 * network packet in one go: a backend terminated right after the connection was made sends its
 * error in the packet that made it, before a promise from `pool.connect()` could resolve, and an
 * `'error'` event with no listener ends the process. pg calls a callback given to `connect` in that
 * same moment, so the listener is attached there; a pool that only answers with a promise is used
 * as it is. With `timeoutMs`, a pool that has not answered by then is given up on.
 *
 * @example
 * const client = await checkout(pool, onError, 10_000);
 * try { await client.query({ text: 'select 1' }); } finally { client.removeListener('error', onError); client.release(); }
 */
export function checkout(
  pool: PostgresLedgerPool,
  listener: (error: Error) => void,
  timeoutMs?: number,
): Promise<PostgresLedgerClient> {
  return new Promise((resolve, reject) => {
    let answered = false;
    // A pool whose connections are made through a network that went silent may never answer:
    // past the deadline the caller is told so, and a client handed out later goes straight back.
    const deadline =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            if (answered) return;
            answered = true;
            reject(
              Object.assign(new Error(`no PostgreSQL connection within ${timeoutMs} ms`), {
                code: 'ETIMEDOUT',
              }),
            );
          }, timeoutMs);
    deadline?.unref();
    const callback: Callback = (error, client) => {
      if (answered) {
        client?.release(error !== undefined && error !== null);
        return;
      }
      answered = true;
      clearTimeout(deadline);
      if (error !== undefined && error !== null) return reject(error);
      if (client === undefined) return reject(new Error('the pool answered neither a client nor an error'));
      client.on('error', listener);
      resolve(client);
    };
    const returned = (pool.connect as (callback: Callback) => unknown)(callback);
    if (isThenable(returned)) {
      returned.then(
        (client) => callback(undefined, client as PostgresLedgerClient),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), undefined),
      );
    }
  });
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}
