import { isTerminal, type ToolCallRecord } from '@toolgate/core';
import type { ServerGate } from '@toolgate/server';

/**
 * The ledger as one principal may see one session of it. Every read is one of the gate's scoped
 * reads (`calls` of that session, `settled` for that principal, only of a call the session holds),
 * so a call id from another session, or one the principal may not see, reads exactly as one the
 * ledger does not hold.
 */
export interface SessionView {
  /** The session's calls the principal may see, by id. */
  readonly calls: () => Promise<Map<string, ToolCallRecord>>;
  /**
   * Resolves once the call has ended, here or on another instance, or is held in doubt for a person
   * (its outcome is unknown until someone settles it: the model is told so rather than kept
   * waiting); `undefined` when the session has no such call for this principal. Rejects with the
   * signal's reason when it aborts first.
   */
  readonly settled: (id: string, signal?: AbortSignal) => Promise<ToolCallRecord | undefined>;
}

export function sessionView(gate: ServerGate, session: string, principal: string): SessionView {
  async function calls(): Promise<Map<string, ToolCallRecord>> {
    const list = await gate.calls(session, principal);
    return new Map(list.map((call) => [call.id, call]));
  }

  async function settled(id: string, signal?: AbortSignal): Promise<ToolCallRecord | undefined> {
    signal?.throwIfAborted();
    const known = (await calls()).get(id);
    if (known === undefined || isTerminal(known.status) || known.doubt !== undefined) return known;
    // The call is this session's: the gate's own wait, scoped to the principal, follows it to its end
    // (or until it is held for a person) on whichever instance that happens.
    const ended = gate.stopped(id, { principal });
    if (signal === undefined) return ended;
    let stop = (): void => undefined;
    const aborted = new Promise<never>((_, reject) => {
      stop = () => reject(signal.reason as Error);
    });
    signal.addEventListener('abort', stop, { once: true });
    try {
      return await Promise.race([ended, aborted]);
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  return {
    calls,
    settled,
  };
}
