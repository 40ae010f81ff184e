import { isTerminal } from '@toolgate/core';
import type { Tail } from '../feed/feed.ts';
import type { GateParts } from '../gate/parts.ts';
import { createContinuations, type Continuations } from './continuations.ts';
import type { TurnSettledHandler } from './ended-turn.ts';

/**
 * Keeps a gate's turns: the runner of `onTurnSettled`, told of every call's end the ledger's tail
 * brings (from any process).
 *
 * @example
 * const turns = keepTurns(parts, tail, options.onTurnSettled);
 * openTurn(parts, turnOptions, { settled, cancel, closed: turns.closed });
 */
export function keepTurns(
  parts: Pick<GateParts, 'options' | 'settings' | 'ledger' | 'sessions'>,
  tail: Tail,
  handler: TurnSettledHandler,
): Continuations {
  const { ledger, settings, sessions } = parts;
  const continuations = createContinuations({
    ledger,
    clock: settings.clock,
    leaseMs: settings.leaseMs,
    instance: settings.instance,
    onError: settings.onError,
    generateId: settings.generateId,
    mayView: async (principal, session) =>
      sessions.mayView(principal, session, await sessions.owner(session)),
    handler,
    sweeping: parts.options.recover !== false,
  });
  const following = tail.subscribe((moves) => {
    for (const { event } of moves)
      if (event.from !== event.to && isTerminal(event.to)) continuations.ended(event.callId);
  });
  following.from.catch(settings.onError);
  return {
    ...continuations,
    async stop() {
      following.stop();
      await continuations.stop();
    },
  };
}
