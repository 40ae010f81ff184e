import type { Committed, LedgerBackend, OwnCommit } from './ledger.ts';

/**
 * Who hears of commits: this ledger object's own, handed over as they are, and other processes',
 * through the backend's watch, which runs only while someone listens.
 *
 * @example
 * const commits = createCommitSignal(backend, console.error);
 * const stop = commits.onCommitted((committed) => readNew(committed));
 * commits.wake(moves);
 */
export interface CommitSignal {
  readonly wake: (committed?: Committed, own?: OwnCommit) => void;
  readonly onCommitted: (listener: (committed?: Committed, own?: OwnCommit) => void) => () => void;
  /** Drops every listener and stops watching, for good. */
  readonly close: () => void;
}

/**
 * Builds the signal over a backend's watch.
 *
 * @example
 * const commits = createCommitSignal(backend, onError);
 */
export function createCommitSignal(
  backend: Pick<LedgerBackend, 'watch'>,
  onError: (error: unknown) => void,
): CommitSignal {
  const listeners = new Set<{ readonly listener: (committed?: Committed, own?: OwnCommit) => void }>();
  let stopWatching: (() => void) | undefined;
  let closed = false;

  const wake = (committed?: Committed, own?: OwnCommit) => {
    for (const { listener } of [...listeners]) {
      try {
        listener(committed, own);
      } catch (error) {
        onError(error);
      }
    }
  };

  const onCommitted = (listener: (committed?: Committed, own?: OwnCommit) => void) => {
    const entry = { listener };
    if (closed) return () => undefined;
    listeners.add(entry);
    stopWatching ??= backend.watch((seq) => wake(seq));
    return () => {
      if (!listeners.delete(entry) || listeners.size > 0) return;
      stopWatching?.();
      stopWatching = undefined;
    };
  };

  return {
    wake,
    onCommitted,
    close() {
      closed = true;
      listeners.clear();
      stopWatching?.();
      stopWatching = undefined;
    },
  };
}
