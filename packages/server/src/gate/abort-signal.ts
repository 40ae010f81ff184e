/**
 * The `signal` a proposal was given, checked: an `AbortSignal`, or `undefined`. Anything else
 * throws, since a cancel the caller meant to wire up would otherwise silently never come.
 *
 * @example
 * const signal = proposalSignal('serverGate.propose', options.signal);
 */
export function proposalSignal(where: string, signal: AbortSignal | undefined): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  const candidate = signal as unknown as Partial<AbortSignal> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.aborted !== 'boolean' ||
    typeof candidate.addEventListener !== 'function'
  ) {
    throw new TypeError(
      `${where}: \`signal\` must be an AbortSignal (from an AbortController, or request.signal).`,
    );
  }
  return signal;
}

/**
 * The reason a call is cancelled with when its proposal's signal aborts: the signal's own reason
 * when it says something, else that the request was aborted.
 *
 * @example
 * abortMessage(AbortSignal.abort('the client went away')); // 'the client went away'
 */
export function abortMessage(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  const said =
    typeof reason === 'string'
      ? reason
      : reason instanceof Error && reason.name !== 'AbortError'
        ? reason.message
        : '';
  return said.trim() === '' ? 'the request that proposed this call was aborted' : said.slice(0, 2000);
}
