import type { ToolGate } from '@toolgate/core';
import { ToolGateProvider, useToolCallIds, useToolGate } from '@toolgate/react';
import { memo, useMemo, useRef, type ReactElement } from 'react';
import { useStore } from 'zustand';
import type { AuditFeed } from '../chat/audit-feed.ts';
import type { Conversation } from '../chat/conversation.ts';
import type { TranscriptEntry } from '../chat/transcript.ts';
import { PAGE_TOOL_NAMES } from '../shop/page-tools.ts';
import { CallGrid } from './CallGrid.tsx';
import { useFollowBottom } from './follow-bottom.ts';
import { ToolCallCard } from './ToolCallCard.tsx';

/** Past this many calls in one turn, each call is shown as a compact chip. */
const COMPACT_FROM = 12;

export function Transcript({
  conversation,
  empty,
}: {
  conversation: Conversation;
  empty: ReactElement;
}): ReactElement {
  const entries = useStore(conversation.transcript, (state) => state.entries);
  const scroller = useRef<HTMLDivElement>(null);
  const onScroll = useFollowBottom(scroller, entries);

  return (
    <div
      className="transcript"
      ref={scroller}
      role="log"
      aria-label="Conversation"
      tabIndex={0}
      data-testid="transcript"
      onScroll={onScroll}
    >
      {entries.length === 0
        ? empty
        : entries.map((entry) => (
            <Entry
              key={entry.key}
              entry={entry}
              audit={conversation.audit}
              pageGate={conversation.pageGate}
            />
          ))}
    </div>
  );
}

const Entry = memo(function Entry({
  entry,
  audit,
  pageGate,
}: {
  entry: TranscriptEntry;
  audit: AuditFeed;
  pageGate: ToolGate;
}): ReactElement {
  switch (entry.kind) {
    case 'user':
      return (
        <div className="message user" data-role="user">
          <p className="bubble">{entry.text}</p>
        </div>
      );
    case 'notice':
      return (
        // Each notice is a live region of its own: announced when it appears, whatever the log around it does.
        <div className="notice" data-testid="notice" data-tone={entry.tone} role="status" aria-live="polite">
          <span className="notice-icon" aria-hidden="true">
            {entry.tone === 'guard' ? '‖' : entry.tone === 'stop' ? '■' : '!'}
          </span>
          <p>{entry.text}</p>
        </div>
      );
    case 'assistant':
      return (
        <div className="message assistant" data-role="assistant" data-streaming={entry.streaming}>
          <span className="avatar" aria-hidden="true">
            AI
          </span>
          <div className="assistant-body">
            {entry.text === '' && entry.streaming ? (
              <p className="bubble typing" aria-label="The model is writing">
                <span />
                <span />
                <span />
              </p>
            ) : entry.text === '' ? null : (
              <p className="bubble" data-testid="assistant-text">
                {entry.text}
              </p>
            )}
            {entry.callIds.length === 0 ? null : entry.callIds.length >= COMPACT_FROM ? (
              <>
                <TurnSummary ids={entry.callIds} audit={audit} />
                <CallGrid ids={entry.callIds} />
              </>
            ) : (
              <ul className="call-list" aria-label="Tool calls">
                {entry.callIds.map((id) =>
                  !PAGE_TOOL_NAMES.has(entry.names?.[id] ?? '') ? (
                    <ToolCallCard
                      key={id}
                      id={id}
                      name={entry.names?.[id]}
                      modelId={entry.modelIds?.[id]}
                      sent={entry.sent?.[id]}
                      preview={entry.previews?.[id]}
                      ended={entry.ended?.[id]}
                      runs="server"
                    />
                  ) : (
                    // A page tool's call: its status comes from the browser's own gate.
                    <ToolGateProvider key={id} gate={pageGate}>
                      <ToolCallCard
                        id={id}
                        name={entry.names?.[id]}
                        modelId={entry.modelIds?.[id]}
                        sent={entry.sent?.[id] ?? entry.pageCalls?.[id]?.arguments}
                        preview={entry.previews?.[id]}
                        ended={entry.ended?.[id] ?? entry.pageCalls?.[id]?.settled}
                        runs="page"
                      />
                    </ToolGateProvider>
                  ),
                )}
              </ul>
            )}
          </div>
        </div>
      );
  }
});

const ORDER = [
  'committed',
  'rejected',
  'cancelled',
  'failed',
  'awaiting_approval',
  'executing',
  'validated',
  'pending',
] as const;

/**
 * Counts a big turn's calls by status. It follows the audit feed, which moves once per frame,
 * rather than every transition of every call: with 200 calls in flight that is the difference
 * between a few hundred recounts and tens of thousands. After a reload the feed can be read before
 * the gate has mirrored the calls (both come from the server), so it recounts as calls arrive too.
 */
function TurnSummary({ ids, audit }: { ids: readonly string[]; audit: AuditFeed }): ReactElement {
  const gate = useToolGate();
  const events = useStore(audit, (state) => state.events.length);
  const known = useToolCallIds().length;
  const summary = useMemo(() => {
    const counts = new Map<string, number>();
    for (const id of ids) {
      const status = gate.get(id)?.status;
      if (status !== undefined) counts.set(status, (counts.get(status) ?? 0) + 1);
    }
    return ORDER.filter((status) => counts.has(status))
      .map((status) => `${counts.get(status) ?? 0} ${status.replace('_', ' ')}`)
      .join(' · ');
    // `events` is the clock: every transition adds an audit event.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [gate, ids, events, known]);
  return (
    <p className="turn-summary" data-testid="turn-summary">
      {summary}
    </p>
  );
}
