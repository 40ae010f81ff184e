/**
 * One notice as the playground's outbox keeps it and the page shows it: what kind, to whom, about
 * which call (its tool, input and status as the notice was written), and, for a notice that asks,
 * the confirm page's link for that person.
 */
export interface OutboxItem {
  readonly id: string;
  readonly kind: 'asked' | 'reminder' | 'escalated' | 'decided' | 'expired';
  readonly to: string;
  /** Who asked for the call. */
  readonly from: string;
  readonly call: {
    readonly id: string;
    readonly name: string;
    readonly status: string;
    readonly input?: unknown;
    readonly reason?: string;
    /** Who approved it so far. */
    readonly approvedBy?: readonly string[];
  };
  readonly link?: string;
  /** When the outbox took it, in ms since the epoch. */
  readonly at: number;
}
