import type { ServerGate } from '../gate/server-gate.ts';
import type { FeedSource } from './event-stream.ts';

/**
 * The event feed of a principal's inbox: its snapshot names whose inbox it is, so that a page
 * can tell which moves take a call out of it (the principal approved, and others still must).
 *
 * @example
 * return feed(request, principal, after, inboxSource(gate, principal));
 */
export function inboxSource(gate: ServerGate, principal: string): FeedSource {
  return {
    snapshot: async () => ({ ...(await gate.awaitingSnapshot(principal)), principal }),
    moves: (after) => gate.awaitingMoves(principal, { after }),
  };
}
