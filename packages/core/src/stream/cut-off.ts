/**
 * Why a call the model was still writing is refused when the provider says its output limit cut
 * the turn short; `signal` is how that provider said it, e.g. `finish_reason "length"`.
 *
 * @example
 * calls.end(finish === 'length' ? outputCutOff(`finish_reason "${finish}"`) : undefined);
 */
export function outputCutOff(signal: string): string {
  return `the model's output was cut off (${signal}) before this call's arguments were complete; nothing was run`;
}

/**
 * Why the calls a provider had not finished are refused when its stream reports an error.
 *
 * @example
 * calls.breakOff(STREAM_ERROR);
 */
export const STREAM_ERROR = 'the stream reported an error before this call was complete; nothing was run';

/**
 * Why the calls a provider had not finished are refused when the stream itself fails.
 *
 * @example
 * brokenOff(new Error('socket hang up'));
 * // 'the stream broke off before this call was complete (socket hang up); nothing was run'
 */
export function brokenOff(error?: unknown): string {
  const why = error === undefined ? '' : ` (${errorText(error)})`;
  return `the stream broke off before this call was complete${why}; nothing was run`;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    // An SDK may reject with a plain object; `undefined`, functions and symbols have no JSON.
    return JSON.stringify(error) ?? typeof error;
  } catch {
    return typeof error;
  }
}
