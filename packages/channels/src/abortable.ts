/**
 * Waits for `work` until `signal` aborts, for a client that takes no signal of its own: the gate's
 * abort then ends the wait (the delivery has failed, and is tried again), while the client's own
 * timeouts end what it started.
 *
 * @example
 * await abortable(client.chat.postMessage(message), signal);
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason as Error);
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
