import {
  isTerminal,
  type AuditEvent,
  type SettledCall,
  type ToolCallStatus,
  type ToolGate,
} from '@toolgate/core';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ShopStore } from '../shop/shop-store.ts';

export interface Verdict {
  /** How many times the shop's state has changed since the conversation began. */
  readonly changes: number;
  /**
   * The call that settled last, and which state its commit would write: the shop's, only this
   * page's view, or neither (its tool acts in another system, a payment provider, and has no commit).
   */
  readonly last?: {
    readonly callId: string;
    readonly name: string;
    readonly status: ToolCallStatus;
    readonly code?: string;
    readonly writes: Writes;
  };
}

export type VerdictStore = StoreApi<Verdict>;

type Writes = 'shop' | 'view' | 'elsewhere';

/** What {@link watchVerdict} watches. */
export interface VerdictSources {
  readonly shop: ShopStore;
  /** The mirror of the server gate: its calls commit to the shop. */
  readonly gate: Pick<ToolGate, 'audit'>;
  /** The browser's own gate: its calls commit only to this page's view. */
  readonly pageGate: Pick<ToolGate, 'audit'>;
  /** The server's audit trail up to the page's load: the verdict and the count go on from it, after a reload too. */
  readonly history: readonly AuditEvent[];
  /** The calls the page's own gate had settled before the page loaded (their moves are not in the server's trail). */
  readonly settledInPage: readonly SettledCall[];
  /** Whether a committed call of this tool writes the shop (its tool has a `commit`). */
  readonly changesShop: (name: string) => boolean;
}

/** An event that ends a call: a refusal (a stale approval, say) leaves its call as it was, and is no verdict. */
const ends = (event: AuditEvent) => isTerminal(event.to) && event.from !== event.to;

const lastOf = (event: AuditEvent, writes: Writes): NonNullable<Verdict['last']> => ({
  callId: event.callId,
  name: event.name,
  status: event.to,
  ...(event.reason === undefined ? {} : { code: event.reason.code }),
  writes,
});

/** A page call as the transcript keeps it: it wrote only this page's view. */
const lastOfCall = (call: SettledCall): NonNullable<Verdict['last']> => ({
  callId: call.id,
  name: call.name,
  status: call.status,
  ...(call.reason === undefined ? {} : { code: call.reason.code }),
  writes: 'view',
});

/**
 * Watches the shop and both gates' audit logs together: every state change is counted, and every
 * call that settles becomes the latest verdict. It starts from the server's trail as loaded, so a
 * reload shows the same verdict and count as before it. Returns the store and a function that
 * stops watching.
 */
export function watchVerdict({ shop, gate, pageGate, history, settledInPage, changesShop }: VerdictSources): {
  verdict: VerdictStore;
  stop: () => void;
} {
  const shopOrElsewhere = (event: AuditEvent): Writes => (changesShop(event.name) ? 'shop' : 'elsewhere');
  const ended = history.filter(ends);
  // The last call to end, of the server's and the page's: a sort that keeps ties in that order.
  const endings = [
    ...ended.map((event) => ({ at: event.at, last: lastOf(event, shopOrElsewhere(event)) })),
    ...settledInPage.map((call) => ({ at: call.updatedAt, last: lastOfCall(call) })),
  ];
  const latest = endings.sort((a, b) => a.at - b.at).at(-1)?.last;
  const verdict = createStore<Verdict>()(() => ({
    changes: ended.filter((event) => event.to === 'committed' && changesShop(event.name)).length,
    ...(latest === undefined ? {} : { last: latest }),
  }));
  const stopShop = shop.subscribe(() => verdict.setState((state) => ({ changes: state.changes + 1 })));
  const follow = (source: Pick<ToolGate, 'audit'>, writes: (event: AuditEvent) => Writes) =>
    source.audit.subscribe((event) => {
      if (ends(event)) verdict.setState({ last: lastOf(event, writes(event)) });
    });
  const stops = [stopShop, follow(gate, shopOrElsewhere), follow(pageGate, () => 'view')];
  return {
    verdict,
    stop: () => {
      for (const stop of stops) stop();
    },
  };
}
