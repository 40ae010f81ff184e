/** A promise a test settles by hand, to hold a tool, a check or a queue step where it wants it. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * A promise the test resolves or rejects by hand.
 *
 * @example
 * const payment = deferred<{ charged: number }>();
 * const tool = defineTool({ name: 'charge', inputSchema, execute: () => payment.promise });
 * payment.resolve({ charged: 1250 });
 */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
