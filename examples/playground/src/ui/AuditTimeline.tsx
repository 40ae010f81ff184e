import type { AuditEvent } from '@toolgate/core';
import { memo, useLayoutEffect, useRef, useState, type ReactElement, type UIEvent } from 'react';
import { useStore } from 'zustand';
import type { AuditFeed } from '../chat/audit-feed.ts';
import { useFollowBottom } from './follow-bottom.ts';

const clock = new Intl.DateTimeFormat('en-GB', {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  fractionalSecondDigits: 3,
  hour12: false,
});

/** Every row is this tall (two lines), so only the rows in view need to exist. */
const ROW = 40;
/** Rows rendered above and below the visible ones, so fast scrolling never shows a gap. */
const OVERSCAN = 8;
/** The list's height before it is measured. */
const VIEW = 360;

/**
 * Every transition of every call, oldest first, with its time and reason. A flood of calls makes
 * a thousand transitions; only the rows in view are in the DOM, each carrying its position in the
 * whole list for assistive technology.
 */
export function AuditTimeline({ feed }: { feed: AuditFeed }): ReactElement {
  const events = useStore(feed, (state) => state.events);
  const list = useRef<HTMLOListElement>(null);
  const follow = useFollowBottom(list, events);
  const [scrollTop, setScrollTop] = useState(0);
  const [view, setView] = useState(VIEW);
  const hasEvents = events.length > 0;

  useLayoutEffect(() => {
    const element = list.current;
    if (element === null) return;
    const observer = new ResizeObserver(() => setView(element.clientHeight));
    observer.observe(element);
    return () => observer.disconnect();
  }, [hasEvents]);

  const onScroll = (event: UIEvent<HTMLOListElement>) => {
    follow(event);
    setScrollTop(event.currentTarget.scrollTop);
  };

  const first = Math.max(0, Math.floor(scrollTop / ROW) - OVERSCAN);
  const last = Math.min(events.length, Math.ceil((scrollTop + view) / ROW) + OVERSCAN);

  const exportJson = () => {
    const blob = new Blob([JSON.stringify(events, null, 2)], { type: 'application/json' });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = 'toolgate-audit.json';
    link.click();
    // Released once the click has handed the file to the browser's download.
    setTimeout(() => URL.revokeObjectURL(link.href), 0);
  };

  return (
    <section className="audit" aria-labelledby="audit-title">
      <div className="panel-head">
        <h2 id="audit-title" className="panel-title">
          Audit timeline{' '}
          <span className="count" data-testid="audit-count">
            {events.length}
          </span>
        </h2>
        <button
          type="button"
          className="button quiet small"
          onClick={exportJson}
          disabled={events.length === 0}
        >
          Export JSON
        </button>
      </div>
      {events.length === 0 ? (
        <p className="audit-empty">
          Every transition of every call will be listed here, with its time and reason.
        </p>
      ) : (
        <ol
          className="audit-list"
          ref={list}
          tabIndex={0}
          aria-label="Transitions, oldest first"
          data-testid="audit"
          onScroll={onScroll}
        >
          <li className="audit-spacer" aria-hidden="true" style={{ height: events.length * ROW }} />
          {events.slice(first, last).map((event, offset) => (
            <AuditRow key={first + offset} event={event} position={first + offset} total={events.length} />
          ))}
        </ol>
      )}
    </section>
  );
}

const AuditRow = memo(function AuditRow({
  event,
  position,
  total,
}: {
  event: AuditEvent;
  position: number;
  total: number;
}): ReactElement {
  return (
    <li
      className={position % 2 === 0 ? 'audit-row striped' : 'audit-row'}
      data-to={event.to}
      aria-posinset={position + 1}
      aria-setsize={total}
      style={{ top: position * ROW }}
    >
      <span className="audit-line">
        <time dateTime={new Date(event.at).toISOString()}>{clock.format(event.at)}</time>{' '}
        <code>{event.name || '(no name)'}</code> <span className="audit-id">{event.callId}</span>
      </span>
      <span className="audit-line">
        <span className="audit-move">
          {event.from ?? 'new'} →{' '}
          <span className="status-word" data-tone={event.to}>
            {event.to}
          </span>
        </span>
        {event.reason === undefined ? null : (
          <span className="audit-reason">
            {' '}
            <code>{event.reason.code}</code> {event.reason.message}
          </span>
        )}
      </span>
    </li>
  );
});
