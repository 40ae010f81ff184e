import { isTerminal, type SettledCall, type ToolCallRecord } from '@toolgate/core';
import type { ServerGate } from '@toolgate/server';

/**
 * The ledger as one principal may see one session of it. Every read goes through the gate's
 * scoped reads (`calls`, `snapshot`, `moves` for that session and principal), so a call id from
 * another session, or one the principal may not see, reads exactly as one the ledger does not hold.
 */
export interface SessionView {
  /** The session's calls the principal may see, by id. */
  readonly calls: () => Promise<Map<string, ToolCallRecord>>;
  /** One call of the session, or `undefined`. */
  readonly find: (id: string) => Promise<ToolCallRecord | undefined>;
  /**
   * Resolves once the call has ended, here or on another instance; `undefined` when the session has
   * no such call for this principal. Rejects with the signal's reason when it aborts first.
   */
  readonly settled: (id: string, signal?: AbortSignal) => Promise<SettledCall | undefined>;
}

export function sessionView(gate: ServerGate, session: string, principal: string): SessionView {
  async function calls(): Promise<Map<string, ToolCallRecord>> {
    const list = await gate.calls(session, principal);
    return new Map(list.map((call) => [call.id, call]));
  }

  async function settled(id: string, signal?: AbortSignal): Promise<SettledCall | undefined> {
    signal?.throwIfAborted();
    const { seq, calls: now } = await gate.snapshot(session, principal);
    const known = now.find((call) => call.id === id);
    if (known === undefined || isTerminal(known.status)) return known as SettledCall | undefined;
    const feed = gate.moves(session, { principal, after: seq });
    let stop = (): void => undefined;
    const aborted = new Promise<never>((_, reject) => {
      stop = () => {
        void feed.return?.();
        reject(signal?.reason as Error);
      };
    });
    aborted.catch(() => undefined);
    if (signal?.aborted === true) stop();
    signal?.addEventListener('abort', stop, { once: true });
    const ended = (async () => {
      for await (const { record } of feed) {
        if (record.id === id && isTerminal(record.status)) return record as SettledCall;
      }
      // The feed ends only when the gate closes: answer what the ledger holds at that moment.
      return (await calls()).get(id) as SettledCall | undefined;
    })();
    try {
      return await Promise.race([ended, aborted]);
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  }

  return {
    calls,
    find: async (id) => (await calls()).get(id),
    settled,
  };
}
