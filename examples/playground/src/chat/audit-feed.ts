import type { AuditEvent, ToolCallRecord, ToolGate } from '@toolgate/core';
import { createStore, type StoreApi } from 'zustand/vanilla';

export interface AuditFeedState {
  readonly events: readonly AuditEvent[];
}

export type AuditFeed = StoreApi<AuditFeedState>;

/**
 * The audit trail for the timeline: the server's events up to the page's load, then every move
 * the gates report (the server gate's through its mirror, and the page's own), delivered at most
 * once per frame: a flood of calls makes hundreds of moves a second, and rendering each one on its
 * own would freeze the page.
 */
export function watchAudit(
  history: readonly AuditEvent[],
  gates: readonly Pick<ToolGate, 'audit'>[],
): { feed: AuditFeed; stop: () => void } {
  const feed = createStore<AuditFeedState>()(() => ({ events: history }));
  let pending: AuditEvent[] = [];
  let frame: number | undefined;
  const flush = () => {
    frame = undefined;
    const arrived = pending;
    pending = [];
    feed.setState((state) => ({ events: [...state.events, ...arrived] }));
  };
  const stops = gates.map((gate) =>
    gate.audit.subscribe((event) => {
      pending.push(event);
      frame ??= requestAnimationFrame(flush);
    }),
  );
  return {
    feed,
    stop: () => {
      for (const stop of stops) stop();
      if (frame !== undefined) cancelAnimationFrame(frame);
    },
  };
}

/**
 * The server's trail with the moves of calls the page's own gate settled before this load (the
 * server's trail has none of them), read from their records' histories, in time order.
 */
export function withPageMoves(
  history: readonly AuditEvent[],
  settledInPage: readonly ToolCallRecord[],
): readonly AuditEvent[] {
  if (settledInPage.length === 0) return history;
  const moves = settledInPage.flatMap((call) =>
    call.history.map((step, index): AuditEvent => ({
      callId: call.id,
      name: call.name,
      from: call.history[index - 1]?.status ?? null,
      to: step.status,
      at: step.at,
      ...(step.reason === undefined ? {} : { reason: step.reason }),
    })),
  );
  return [...history, ...moves].sort((a, b) => a.at - b.at);
}
