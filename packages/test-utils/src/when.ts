/**
 * Resolves with the store's state once `check` holds (at once, or after the update that makes it hold).
 *
 * @example
 * await when(gate.connection, (state) => state.state === 'live');
 */
export function when<T>(
  store: { getState: () => T; subscribe: (listener: (state: T) => void) => () => void },
  check: (state: T) => boolean,
): Promise<T> {
  return new Promise((resolve) => {
    if (check(store.getState())) {
      resolve(store.getState());
      return;
    }
    const stop = store.subscribe((state) => {
      if (!check(state)) return;
      stop();
      resolve(state);
    });
  });
}

/**
 * Collects what a gate reports to `onError`, and lets a test wait for the next report.
 *
 * @example
 * const log = errorLog();
 * const gate = createRemoteGate({ url, session, tools, onError: log.onError });
 * expect((await log.nth(1)).message).toMatch(/feed/);
 */
export function errorLog() {
  const errors: Error[] = [];
  let waiting: ((error: Error) => void)[] = [];
  return {
    errors,
    messages: () => errors.map((error) => error.message),
    onError(error: unknown) {
      const as = error instanceof Error ? error : new Error(String(error));
      errors.push(as);
      const resolve = waiting;
      waiting = [];
      for (const settle of resolve) settle(as);
    },
    /** The `n`-th report (1-based), now or when it comes. */
    nth(n: number): Promise<Error> {
      const known = errors[n - 1];
      if (known !== undefined) return Promise.resolve(known);
      return new Promise((resolve) => {
        const check = () => {
          const error = errors[n - 1];
          if (error !== undefined) resolve(error);
          else waiting.push(check);
        };
        waiting.push(check);
      });
    },
  };
}
