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
  /** The Slack card a Slack channel would post: its notification text and Block Kit blocks. */
  readonly slack: { readonly text: string; readonly blocks: readonly OutboxBlock[] };
  /** The mail an email channel would send: subject, plain text and HTML (shown sandboxed, never run). */
  readonly mail: { readonly subject: string; readonly text: string; readonly html: string };
}

/** A Block Kit block as the page reads it: only its `type` is known for sure. */
export type OutboxBlock = Readonly<Record<string, unknown>> & { readonly type?: unknown };
