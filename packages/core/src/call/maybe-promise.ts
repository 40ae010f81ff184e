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
  follow(value as PromiseLike<T>, thenMethod as PromiseLike<T>['then'], then, fail);
}

/**
 * {@link after} with a context handed to `then` and `fail`, so that a hot path passes functions
 * made once instead of closures made for each value: a plain value costs no allocation.
 *
 * @example
 * afterWith(job, tool.execute(input, ctx), receive, thrown); // receive(job, output), thrown(job, error)
 */
export function afterWith<C, T>(
  context: C,
  value: MaybePromise<T>,
  then: (context: C, value: T) => void,
  fail: (context: C, error: unknown) => void,
): void {
  let thenMethod: unknown;
  try {
    thenMethod =
      (typeof value === 'object' || typeof value === 'function') && value !== null
        ? (value as { then?: unknown }).then
        : undefined;
  } catch (error) {
    fail(context, error);
    return;
  }
  if (typeof thenMethod !== 'function') {
    then(context, value as T);
    return;
  }
  follow(
    value as PromiseLike<T>,
    thenMethod as PromiseLike<T>['then'],
    (settled) => then(context, settled),
    (error) => fail(context, error),
  );
}

/** Waits on a thenable whose `then` was read already, so that it is read once. */
function follow<T>(
  value: PromiseLike<T>,
  thenMethod: PromiseLike<T>['then'],
  then: (value: T) => void,
  fail: (error: unknown) => void,
): void {
  let answered = false;
  try {
    thenMethod.call(
      value,
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
