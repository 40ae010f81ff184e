import type { AuditEvent, ToolGate } from '@toolgate/core';
import { createStore, type StoreApi } from 'zustand/vanilla';

export interface AuditFeedState {
  readonly events: readonly AuditEvent[];
}

export type AuditFeed = StoreApi<AuditFeedState>;

/**
 * The gate's audit events for the timeline, delivered at most once per frame: a flood of calls
 * makes hundreds of transitions a second, and rendering each one on its own would freeze the page.
 */
export function watchAudit(gate: ToolGate): { feed: AuditFeed; stop: () => void } {
  const feed = createStore<AuditFeedState>()(() => ({ events: gate.audit.export() }));
  let pending: AuditEvent[] = [];
  let frame: number | undefined;
  const flush = () => {
    frame = undefined;
    const arrived = pending;
    pending = [];
    feed.setState((state) => ({ events: [...state.events, ...arrived] }));
  };
  const stop = gate.audit.subscribe((event) => {
    pending.push(event);
    frame ??= requestAnimationFrame(flush);
  });
  return {
    feed,
    stop: () => {
      stop();
      if (frame !== undefined) cancelAnimationFrame(frame);
    },
  };
}
