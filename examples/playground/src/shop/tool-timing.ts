/**
 * How long the shop's pretend back end takes. `scale` multiplies every delay: 1 looks like a real
 * network, 0 answers at once (tests and the flood use it). Delays marked `fixed` ignore the scale,
 * because the point of that tool is to be slow enough to cancel.
 */
export interface ToolTiming {
  readonly scale: number;
}

export const REALISTIC_TIMING: ToolTiming = { scale: 1 };
export const INSTANT_TIMING: ToolTiming = { scale: 0 };

/** Resolves after `ms`, or rejects with the signal's reason as soon as it is aborted. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
