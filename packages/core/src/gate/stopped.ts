import { isTerminal, type SettledCall, type ToolCallRecord } from '../record/record.ts';

/**
 * Whether a call has come to rest for its turn: it has ended, or it waits for a person (whose
 * decision may take days, so nothing should wait for it): for their approval, or, held in doubt,
 * for them to check what happened.
 *
 * @example
 * hasStopped(gate.get('call_1')); // true once it is awaiting_approval, held in doubt, or terminal
 */
export function hasStopped(record: ToolCallRecord | undefined): record is ToolCallRecord {
  return (
    record !== undefined &&
    (isTerminal(record.status) ||
      record.status === 'awaiting_approval' ||
      (record.status === 'executing' && record.doubt !== undefined))
  );
}

/**
 * What a gate that keeps its records in a call store needs to answer `stopped(id)`.
 *
 * @example
 * const reads: StoppedReads = { get: lookup, subscribeCall: store.subscribeCall, settled };
 */
export interface StoppedReads {
  readonly get: (id: string) => ToolCallRecord | undefined;
  readonly subscribeCall: (id: string, listener: () => void) => () => void;
  /** Resolves once the call has ended; rejects when it never will here (an unknown id, a closed gate). */
  readonly settled: (id: string) => Promise<SettledCall>;
}

/**
 * Resolves with the call's record once it has ended or waits for a person; rejects as `settled`
 * does (an id the gate never saw, a gate closed before the call stopped).
 *
 * @example
 * const record = await stoppedCall(reads, 'call_1');
 * if (record.status === 'awaiting_approval') showApproval(record);
 */
export function stoppedCall(reads: StoppedReads, id: string): Promise<ToolCallRecord> {
  const now = reads.get(id);
  if (hasStopped(now)) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const unsubscribe = reads.subscribeCall(id, () => {
      const next = reads.get(id);
      if (!hasStopped(next) || isTerminal(next.status)) return;
      unsubscribe();
      resolve(next);
    });
    reads.settled(id).then(
      (call) => {
        unsubscribe();
        resolve(call);
      },
      (error: unknown) => {
        unsubscribe();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
