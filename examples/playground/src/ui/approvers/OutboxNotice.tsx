import { memo, useState, type ReactElement } from 'react';
import type { OutboxItem } from '../../chat/outbox-item.ts';
import { MailView, SlackCardView } from './OutboxViews.tsx';

/** What each kind of notice says, in a few words. */
const KIND_WORDS: Readonly<Record<OutboxItem['kind'], string>> = {
  asked: 'Asked to approve',
  reminder: 'Reminder',
  escalated: 'Escalated',
  decided: 'Decided',
  expired: 'Expired',
};

/** How a notice is shown: its summary, the Slack card, or the mail. */
const VIEWS = [
  { value: 'notice', label: 'Notice' },
  { value: 'slack', label: 'Slack card' },
  { value: 'mail', label: 'Mail' },
] as const;
type View = (typeof VIEWS)[number]['value'];

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
 * for one that asks, the confirm page's link; and, on request, the Slack card and the mail the
 * server rendered for it. The mail's HTML is drawn only while its view is open.
 */
export const OutboxNotice = memo(function OutboxNotice({ item }: { item: OutboxItem }): ReactElement {
  const [view, setView] = useState<View>('notice');
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
      <fieldset className="segmented outbox-views">
        <legend>Show</legend>
        {VIEWS.map(({ value, label }) => (
          <label key={value}>
            <input
              type="radio"
              name={`outbox-view-${item.id}`}
              value={value}
              checked={view === value}
              onChange={() => setView(value)}
            />
            <span>{label}</span>
          </label>
        ))}
      </fieldset>
      {view === 'slack' ? <SlackCardView item={item} /> : view === 'mail' ? <MailView item={item} /> : null}
      {item.link === undefined ? null : (
        <a className="outbox-link" href={item.link} target="_blank" rel="noreferrer">
          Open the confirm page
        </a>
      )}
    </li>
  );
});
