/**
 * A value now, or a promise of it. The pipeline stays synchronous for synchronous steps (a sync
 * tool in the browser commits within `propose`) and waits only where a step is asynchronous.
 *
 * @example
 * const answer: MaybePromise<boolean> = tool.needsApproval(input);
 */
export type MaybePromise<T> = T | PromiseLike<T>;

/**
 * Calls `then` with a value: at once when it is plain, when it settles when it is a thenable (of
 * any realm). Reading or calling `then` may throw (a revoked Proxy, a hostile object); that, a
 * rejection, and a thenable that answers twice all end in exactly one call of `then` or `fail`.
 *
 * @example
 * after(tool.execute(input, ctx), (output) => finish(output), (error) => fail(error));
 */
export function after<T>(
  value: MaybePromise<T>,
  then: (value: T) => void,
  fail: (error: unknown) => void,
): void {
  let thenMethod: unknown;
  try {
    thenMethod =
      (typeof value === 'object' || typeof value === 'function') && value !== null
        ? (value as { then?: unknown }).then
        : undefined;
  } catch (error) {
    fail(error);
    return;
  }
  if (typeof thenMethod !== 'function') {
    then(value as T);
    return;
  }
  let answered = false;
  try {
    (thenMethod as PromiseLike<T>['then']).call(
      value as PromiseLike<T>,
      (settled) => {
        if (answered) return;
        answered = true;
        // A thenable may resolve with another thenable.
        after(settled, then, fail);
      },
      (error: unknown) => {
        if (answered) return;
        answered = true;
        fail(error);
      },
    );
  } catch (error) {
    if (answered) return;
    answered = true;
    fail(error);
  }
}

/**
 * Calls `fn`, then `then` with its answer (awaited when it is a thenable), or `fail` when it throws
 * or rejects: app code called where a throw must not escape.
 *
 * @example
 * attempt(() => scope.abandon?.(), done, report);
 */
export function attempt<T>(
  fn: () => MaybePromise<T>,
  then: (value: T) => void,
  fail: (error: unknown) => void,
): void {
  let value: MaybePromise<T>;
  try {
    value = fn();
  } catch (error) {
    fail(error);
    return;
  }
  after(value, then, fail);
}
