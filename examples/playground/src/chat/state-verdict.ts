import { isTerminal, type ToolCallStatus, type ToolGate } from '@toolgate/core';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ShopStore } from '../shop/shop-store.ts';

export interface Verdict {
  /** How many times the shop's state has changed since the conversation began. */
  readonly changes: number;
  /** The call that settled last. */
  readonly last?: { readonly callId: string; readonly name: string; readonly status: ToolCallStatus; readonly code?: string };
}

export type VerdictStore = StoreApi<Verdict>;

/**
 * Watches the shop and the server gate's audit log together: every state change is counted, and every
 * call that settles becomes the latest verdict. Returns the store and a function that stops watching.
 */
export function watchVerdict(shop: ShopStore, gate: ToolGate): { verdict: VerdictStore; stop: () => void } {
  const verdict = createStore<Verdict>()(() => ({ changes: 0 }));
  const stopShop = shop.subscribe(() => verdict.setState((state) => ({ changes: state.changes + 1 })));
  const stopAudit = gate.audit.subscribe((event) => {
    // A refusal (a stale approval, say) leaves its call as it was: it is no verdict.
    if (!isTerminal(event.to) || event.from === event.to) return;
    verdict.setState({
      last: { callId: event.callId, name: event.name, status: event.to, ...(event.reason === undefined ? {} : { code: event.reason.code }) },
    });
  });
  return {
    verdict,
    stop: () => {
      stopShop();
      stopAudit();
    },
  };
}
