/**
 * Waits for `work` until `signal` aborts, for a client that takes no signal of its own: the gate's
 * abort then ends the wait (the delivery has failed, and is tried again), while the client's own
 * timeouts end what it started.
 *
 * @example
 * await abortable(client.chat.postMessage(message), signal);
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason as Error);
    // The request is on its way already: its end is always handled, even when the signal aborted
    // first, or a failure after the gate stopped waiting would be an unhandled rejection.
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
}
