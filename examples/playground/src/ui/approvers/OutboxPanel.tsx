import { useEffect, useState, type ReactElement } from 'react';
import type { OutboxItem } from '../../chat/outbox-item.ts';
import { OutboxNotice } from './OutboxNotice.tsx';

const POLL_MS = 1000;

/**
 * What the server would have sent the people a call asks (a `Channel` that records instead of
 * posting to Slack or sending mail), newest first, read from `/api/outbox` every second.
 */
export function OutboxPanel(): ReactElement {
  const [items, setItems] = useState<readonly OutboxItem[]>([]);
  useEffect(() => {
    // Asked for every second rather than streamed: a browser's six connections to a server are
    // taken by each tab's feeds, and a decision must always find one free.
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const response = await fetch('/api/outbox');
        if (response.ok) {
          const { notices } = (await response.json()) as { notices: OutboxItem[] };
          if (current)
            setItems((kept) =>
              kept.length === notices.length && kept.at(-1)?.id === notices.at(-1)?.id ? kept : notices,
            );
        }
      } catch {
        // The server is away: the next read tries again.
      }
      if (current) timer = setTimeout(() => void read(), POLL_MS);
    };
    void read();
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, []);
  return (
    <section className="outbox" aria-labelledby="outbox-title" data-testid="outbox">
      <h2 id="outbox-title" className="panel-title">
        Outbox
      </h2>
      <p className="policy-note">
        What the server would send, kept in its memory. A large transfer reminds the manager after 20 s, asks
        finance too after 40 s and expires after 5 minutes.
      </p>
      {items.length === 0 ? (
        <p className="outbox-empty">Nothing sent yet.</p>
      ) : (
        <ol className="outbox-list" aria-label="Notices, newest first">
          {[...items].reverse().map((item) => (
            <OutboxNotice key={item.id} item={item} />
          ))}
        </ol>
      )}
    </section>
  );
}
