/**
 * The order in which one gate tells its listeners. An event raised while listeners are being told
 * of another (a listener that cancels a call) waits until every listener has heard the first, so
 * that everyone hears events in the order they happened.
 *
 * @example
 * const delivery = createDelivery();
 * delivery.run(() => tellEveryone(event));
 */
export interface Delivery {
  /** Runs `job` now, or, when called from inside a job, right after the jobs before it. */
  readonly run: (job: () => void) => void;
}

/**
 * Creates the delivery order of one gate.
 *
 * @example
 * const delivery = createDelivery();
 */
export function createDelivery(): Delivery {
  const queue: (() => void)[] = [];
  let running = false;
  return {
    run(job) {
      queue.push(job);
      if (running) return;
      running = true;
      try {
        for (let i = 0; i < queue.length; i++) queue[i]?.();
      } finally {
        queue.length = 0;
        running = false;
      }
    },
  };
}

/**
 * The listeners of one kind of event. Each event reaches each listener that is subscribed when it
 * is told, once: one that unsubscribes and subscribes again while being told is not told again,
 * one unsubscribed before its turn is not told, and one that throws is reported to `onError` while
 * the others are told all the same.
 *
 * @example
 * const listeners = createListeners<[AuditEvent]>(delivery, onError);
 * const stop = listeners.subscribe((event) => log(event));
 * listeners.emit(event);
 */
export interface Listeners<A extends readonly unknown[]> {
  readonly subscribe: (listener: (...args: A) => void) => () => void;
  readonly emit: (...args: A) => void;
  readonly size: () => number;
}

interface Subscription<A extends readonly unknown[]> {
  readonly listener: (...args: A) => void;
  active: boolean;
}

/**
 * Creates a list of listeners told through `delivery`.
 *
 * @example
 * const listeners = createListeners<[]>(createDelivery(), console.error);
 */
export function createListeners<A extends readonly unknown[]>(
  delivery: Delivery,
  onError: (error: unknown) => void,
): Listeners<A> {
  // A subscription per call of `subscribe`, so that subscribing one function twice is two subscriptions.
  const subscriptions = new Set<Subscription<A>>();
  return {
    subscribe(listener) {
      const subscription: Subscription<A> = { listener, active: true };
      subscriptions.add(subscription);
      return () => {
        subscription.active = false;
        subscriptions.delete(subscription);
      };
    },
    emit(...args) {
      if (subscriptions.size === 0) return;
      delivery.run(() => {
        // The ones subscribed now: a listener that subscribes while being told waits for the next event.
        for (const subscription of [...subscriptions]) {
          if (!subscription.active) continue;
          try {
            subscription.listener(...args);
          } catch (error) {
            onError(error);
          }
        }
      });
    },
    size: () => subscriptions.size,
  };
}
