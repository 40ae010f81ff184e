import type { AuditEvent } from '@toolgate/core';
import { memo, useRef, type ReactElement } from 'react';
import { useStore } from 'zustand';
import type { AuditFeed } from '../chat/audit-feed.ts';
import { useFollowBottom } from './follow-bottom.ts';

const clock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hour12: false });

/** Every transition of every call, oldest first, with its time and reason. */
export function AuditTimeline({ feed }: { feed: AuditFeed }): ReactElement {
  const events = useStore(feed, (state) => state.events);
  const list = useRef<HTMLOListElement>(null);
  const onScroll = useFollowBottom(list, events);

  const exportJson = () => {
    const blob = new Blob([JSON.stringify(events, null, 2)], { type: 'application/json' });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = 'toolgate-audit.json';
    link.click();
    URL.revokeObjectURL(link.href);
  };

  return (
    <section className="audit" aria-labelledby="audit-title">
      <div className="panel-head">
        <h2 id="audit-title" className="panel-title">
          Audit timeline <span className="count">{events.length}</span>
        </h2>
        <button type="button" className="button quiet small" onClick={exportJson} disabled={events.length === 0}>
          Export JSON
        </button>
      </div>
      {events.length === 0 ? (
        <p className="audit-empty">Every transition of every call will be listed here, with its time and reason.</p>
      ) : (
        <ol
          className="audit-list"
          ref={list}
          tabIndex={0}
          aria-label="Transitions, oldest first"
          data-testid="audit"
          onScroll={onScroll}
        >
          {events.map((event, index) => (
            <AuditRow key={index} event={event} />
          ))}
        </ol>
      )}
    </section>
  );
}

const AuditRow = memo(function AuditRow({ event }: { event: AuditEvent }): ReactElement {
  return (
    <li className="audit-row" data-to={event.to}>
      <time dateTime={new Date(event.at).toISOString()}>{clock.format(event.at)}</time>
      <span className="audit-call">
        <code>{event.name || '(no name)'}</code> <span className="audit-id">{event.callId}</span>
      </span>
      <span className="audit-move">
        {event.from ?? 'new'} → <span className="status-word" data-tone={event.to}>{event.to}</span>
      </span>
      {event.reason === undefined ? null : (
        <span className="audit-reason">
          <code>{event.reason.code}</code> {event.reason.message}
        </span>
      )}
    </li>
  );
});
