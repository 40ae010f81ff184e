import { memo, type ReactElement } from 'react';
import type { OutboxItem } from '../../chat/outbox-item.ts';

/** What each kind of notice says, in a few words. */
const KIND_WORDS: Readonly<Record<OutboxItem['kind'], string>> = {
  asked: 'Asked to approve',
  reminder: 'Reminder',
  escalated: 'Escalated',
  decided: 'Decided',
  expired: 'Expired',
};

/** A principal as this page names it: the visitor's own, their manager, or finance. */
export const roleOf = (principal: string): string =>
  principal.endsWith(':manager') ? 'the manager' : principal.endsWith(':finance') ? 'finance' : 'you';

/** Where the call stood when the notice was written: who approved it, or its status and reason. */
function standing({ call }: OutboxItem): string {
  const by = call.approvedBy ?? [];
  if (call.status !== 'awaiting_approval' && call.reason === undefined && by.length > 0)
    return `approved by ${by.map(roleOf).join(', ')}`;
  return `${call.status.replace('_', ' ')}${call.reason === undefined ? '' : ` (${call.reason})`}`;
}

/**
 * One notice the outbox would have sent: its kind, to whom, the call (tool, input, status) and,
 * for one that asks, the confirm page's link. Where a Slack card or a mail is drawn, it is drawn
 * here, one notice at a time.
 */
export const OutboxNotice = memo(function OutboxNotice({ item }: { item: OutboxItem }): ReactElement {
  return (
    <li className="outbox-notice" data-testid="outbox-notice" data-kind={item.kind} data-to={roleOf(item.to)}>
      <p className="outbox-head">
        <strong>{KIND_WORDS[item.kind]}</strong> <span>to {roleOf(item.to)}</span>
      </p>
      <p className="outbox-call">
        <code>{item.call.name}</code> {standing(item)}
      </p>
      {item.call.input === undefined ? null : (
        <pre className="outbox-input">{JSON.stringify(item.call.input)}</pre>
      )}
      {item.link === undefined ? null : (
        <a className="outbox-link" href={item.link} target="_blank" rel="noreferrer">
          Open the confirm page
        </a>
      )}
    </li>
  );
});
