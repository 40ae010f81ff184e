import type { ToolCallRecord } from '@toolgate/core';
import { forwardRef, memo, useMemo, type ComponentPropsWithoutRef } from 'react';
import type { ToolCallStatusLabels } from './status-part.tsx';
import { showRemoteParts } from './remote-parts.tsx';
import { ToolCallStatus } from './tool-call-status.tsx';
import { useToolCalls } from './use-tool-calls.ts';

/**
 * The calls waiting for a decision, oldest first. Under a gate made with
 * `createRemoteGate({ baseUrl, inbox: true })` that is the signed-in principal's inbox: the calls
 * across sessions that ask them and that they have not approved yet, each leaving the list once
 * they approved it, someone decided it, or it expired. Under any other gate, its calls waiting for
 * a person. Re-renders only when a call joins, leaves or changes.
 *
 * @example
 * function InboxBadge() {
 *   const waiting = useApprovals();
 *   return <span aria-label={`${waiting.length} waiting for you`}>{waiting.length}</span>;
 * }
 */
export function useApprovals(): readonly ToolCallRecord[] {
  // An inbox is a server gate's: its calls show who approved, who is asked, and refused votes.
  showRemoteParts();
  const calls = useToolCalls(waiting);
  return useMemo(() => [...calls].sort(oldestFirst), [calls]);
}

const waiting = (call: ToolCallRecord) => call.status === 'awaiting_approval';

const oldestFirst = (a: ToolCallRecord, b: ToolCallRecord) =>
  a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The inbox's own words, beside every word of the `<ToolCallStatus>` it shows for each call.
 *
 * @example
 * const labels: Partial<ApprovalInboxLabels> = { inboxTitle: 'À approuver', inboxEmpty: 'Rien à approuver.' };
 */
export interface ApprovalInboxLabels extends ToolCallStatusLabels {
  /** The list's accessible name. */
  readonly inboxTitle: string;
  /** What the inbox says when nothing waits for a decision. */
  readonly inboxEmpty: string;
}

const INBOX_LABELS = {
  inboxTitle: 'Waiting for your approval',
  inboxEmpty: 'Nothing is waiting for your approval.',
};

/**
 * What {@link ApprovalInbox} takes, beside the list's own attributes.
 *
 * @example
 * const props: ApprovalInboxProps = { labels: { inboxEmpty: 'All caught up.' }, pressDelayMs: 500 };
 */
export interface ApprovalInboxProps extends ComponentPropsWithoutRef<'section'> {
  /** Words to use instead of the defaults, the inbox's and each call's; keep the object stable (module scope). */
  readonly labels?: Partial<ApprovalInboxLabels>;
  /** Passed to each `<ToolCallStatus>`: how long a press on a button that just appeared does nothing (default 500 ms). */
  readonly pressDelayMs?: number;
}

/**
 * The approver's inbox: each call waiting for their decision ({@link useApprovals}), oldest first,
 * as a `<ToolCallStatus>` with its tool, its input, who asked and who else is asked, and Approve /
 * Deny. Approve is live only once the full input it approves is shown beside it, as in every
 * `<ToolCallStatus>`. When nothing waits, it says so in a sentence (`labels.inboxEmpty`). Put it
 * under a `ToolGateProvider` whose gate follows the inbox.
 *
 * @example
 * const gate = createRemoteGate({ baseUrl: '/api/toolgate', inbox: true });
 *
 * <ToolGateProvider gate={gate}>
 *   <ApprovalInbox />
 * </ToolGateProvider>
 */
// Pure and named in one expression: an app that never shows the inbox drops it from its bundle (an
// assignment of `displayName` after the fact would keep it).
export const ApprovalInbox = /* @__PURE__ */ Object.assign(
  /* @__PURE__ */ memo(
    /* @__PURE__ */ forwardRef<HTMLElement, ApprovalInboxProps>(function ApprovalInbox(
      { labels, pressDelayMs, ...props },
      ref,
    ) {
      const calls = useApprovals();
      const words = { ...INBOX_LABELS, ...labels };
      return (
        <section data-toolgate="inbox" aria-label={words.inboxTitle} {...props} ref={ref}>
          {calls.length === 0 ? (
            <p data-toolgate="inbox-empty" role="status">
              {words.inboxEmpty}
            </p>
          ) : (
            <ul data-toolgate="inbox-calls">
              {calls.map((call) => (
                <li key={call.id}>
                  <ToolCallStatus
                    id={call.id}
                    {...(labels === undefined ? {} : { labels })}
                    {...(pressDelayMs === undefined ? {} : { pressDelayMs })}
                  />
                </li>
              ))}
            </ul>
          )}
        </section>
      );
    }),
  ),
  { displayName: 'ApprovalInbox' },
);
