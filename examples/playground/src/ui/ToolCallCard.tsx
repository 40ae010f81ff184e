import { outputText } from '@toolgate/core/kit';
import { type ToolCallRecord } from '@toolgate/core';
import {
  ToolCallStatus,
  ToolCallStatusActions,
  ToolCallStatusApprovals,
  ToolCallStatusChanges,
  ToolCallStatusEdit,
  ToolCallStatusInput,
  ToolCallStatusLabel,
  ToolCallStatusReason,
  ToolCallStatusRefusal,
  ToolCallStatusSettle,
  ToolCallStatusUndo,
  useToolCall,
  type ToolCallStatusLabels,
} from '@toolgate/react';
import { memo, type ReactElement } from 'react';
import { budgetWords } from '../model/budget-words.ts';

/**
 * Approving a transfer or wire for another amount: the person types it, and the server gate checks
 * the edit as it checks a proposal (the schema, the wallet, the chat's budget) before it runs it.
 */
function AmountEdit(): ReactElement {
  return (
    <ToolCallStatusEdit>
      {({ input, approve }) => {
        const shown = input as { amount_cents: number };
        return (
          <form
            className="call-edit"
            aria-label="Change the amount"
            onSubmit={(event) => {
              event.preventDefault();
              const dollars = Number(new FormData(event.currentTarget).get('amount'));
              approve({ ...shown, amount_cents: Math.round(dollars * 100) });
            }}
          >
            <label>
              Amount ($){' '}
              <input
                name="amount"
                inputMode="decimal"
                defaultValue={(shown.amount_cents / 100).toFixed(2)}
                size={8}
              />
            </label>{' '}
            <button type="submit" data-action="approve-edited">
              Use this amount
            </button>
          </form>
        );
      }}
    </ToolCallStatusEdit>
  );
}

/** A card payment is undone by a refund at the provider: its Undo says so. */
const CARD_LABELS: Partial<ToolCallStatusLabels> = {
  undo: 'Refund',
  undoing: 'Refunding…',
  undoRunning: 'Refunding',
  undone: 'Refunded',
  undoFailed: 'Refund failed',
};

/** A large transfer's requester pressing Approve: the server's refusal, with why in the page's words. */
const ASKED_OF_OTHERS_LABELS: Partial<ToolCallStatusLabels> = {
  refusals: {
    forbidden:
      'you asked for this transfer, so you may not approve it; your manager must. The server said: {message}.',
  },
};

/**
 * A call whose arguments the model never finished: nothing of it ran. The gate's message says how
 * the stream ended (the connection broke, the output limit); its parenthesis is kept as the cause.
 */
function streamCut(message: string): string {
  const cause = /\(([^()]*)\)/.exec(message)?.[1];
  return `Not run: the model’s stream was cut${cause === undefined ? '' : ` (${cause})`} before this call was complete.`;
}

/**
 * Who a principal is, to the visitor: only this browser may decide its calls, as itself or as the
 * manager (the server's `canApprove`), so every approver is "you", in one role or the other.
 */
const personOf = (principal: string): string =>
  principal.endsWith(':manager')
    ? 'you as the manager'
    : principal.endsWith(':finance')
      ? 'you as finance'
      : 'you';

/**
 * Why the person chatting has no say on a call its tool asked others about: under the server's
 * `selfApproval: 'forbid'`, whoever asked for a call may not approve it.
 */
function AskedOfOthers({ call }: { call: ToolCallRecord | undefined }): ReactElement | null {
  const asked = call?.approval?.asked;
  if (call?.status !== 'awaiting_approval' || asked === undefined) return null;
  return (
    <p className="call-asked" data-testid="asked-of-others">
      Waiting for {asked.map(personOf).join(' or ')}, in Approvals. You asked for this transfer, so the server
      refuses your own Approve.
    </p>
  );
}

/** The playground's own words for a reason the gate wrote for any app: a cut stream, a budget in cents. */
function reasonWords(call: ToolCallRecord | undefined): string | undefined {
  if (call?.reason?.code === 'truncated') return streamCut(call.reason.message);
  if (call?.reason?.code === 'budget_exceeded') return budgetWords(call.reason.message);
  return undefined;
}

/**
 * One tool call in the transcript: what the model asked for (its arguments as they stream, then
 * the validated input Approve approves, shown by `<ToolCallStatusInput>`), where it runs, the live status with its reason and actions, and the result once
 * committed. The status comes from the gate in context: the server's (mirrored) or the page's own.
 * Everything the model or a tool wrote is shown as text.
 */
export const ToolCallCard = memo(function ToolCallCard({
  id,
  name,
  modelId,
  sent,
  preview,
  ended,
  runs,
}: {
  id: string;
  name: string | undefined;
  modelId: string | undefined;
  sent: string | undefined;
  preview: string | undefined;
  /** The call's record when it ended before any gate had it (the model was stopped while it wrote the call). */
  ended: ToolCallRecord | undefined;
  runs: 'server' | 'page';
}): ReactElement {
  const { call: live } = useToolCall(id);
  const call = live ?? ended;
  // While the arguments stream, the server's preview of them; then exactly what the model sent.
  const args =
    sent ??
    preview ??
    (call?.status === 'pending' && call.preview !== undefined ? JSON.stringify(call.preview) : undefined);
  return (
    <li
      className="call-card"
      data-testid="tool-call"
      data-call-id={id}
      data-model-id={modelId ?? id}
      data-runs={runs}
    >
      <div className="call-head">
        <code className="call-name">{name ?? (call?.name || 'tool call')}</code>
        <span className="call-where" data-runs={runs}>
          {runs === 'page' ? 'runs in your browser' : 'runs on the server'}
        </span>
        <span className="call-id">{modelId ?? id}</span>
      </div>
      {/* The reason or the result takes the status's last row, which is there from the start, so
          settling never pushes the transcript down. The first row holds what the model sent (or its
          preview) until the call has a validated input; from then on the status's own part shows
          the input itself, from the record Approve sends, and only then enables Approve. Both are
          kept out of the live region's announcements. */}
      <ToolCallStatus
        id={id}
        {...(ended === undefined ? {} : { call: ended })}
        {...(call?.name === 'pay_by_card' ? { labels: CARD_LABELS } : {})}
        {...(call?.approval?.asked === undefined ? {} : { labels: ASKED_OF_OTHERS_LABELS })}
        className="call-status"
      >
        {call?.input === undefined ? (
          <pre className="call-args" data-toolgate-slot="args" aria-label="Arguments" aria-live="off">
            {args ?? '…'}
          </pre>
        ) : null}
        <ToolCallStatusInput className="call-args" aria-label="Arguments">
          {(input) => JSON.stringify(input)}
        </ToolCallStatusInput>
        <ToolCallStatusLabel nameOf={personOf} />
        <ToolCallStatusActions />
        <ToolCallStatusReason>{reasonWords(call)}</ToolCallStatusReason>
        <ToolCallStatusApprovals className="call-approvals" nameOf={personOf} />
        <ToolCallStatusChanges className="call-changes" nameOf={personOf} />
        <ToolCallStatusRefusal className="call-refusal" />
        <AskedOfOthers call={call} />
        {call?.name === 'transfer_funds' || call?.name === 'wire_funds' ? <AmountEdit /> : null}
        <ToolCallStatusSettle />
        {call?.status === 'committed' ? (
          <p className="call-output">
            <span className="call-output-label">Result</span> <code>{outputText(call.output)}</code>
          </p>
        ) : null}
        <ToolCallStatusUndo className="call-undo" />
        {call?.status === 'committed' && call.compensation?.status === 'committed' ? (
          <p className="call-undone" data-testid="compensation-output">
            <span className="call-output-label">Undone by</span>{' '}
            <code>{outputText(call.compensation.output)}</code>
          </p>
        ) : null}
      </ToolCallStatus>
    </li>
  );
});
