import type { Channel, Notice } from '@toolgate/server';
import type { OutboxItem } from '../chat/outbox-item.ts';

/** How many notices the outbox keeps for one visitor: the newest, as a demo needs no more. */
const KEPT = 50;

/** The outbox: a channel that sends nothing and keeps what it would have sent, per visitor. */
export interface Outbox {
  readonly channel: Channel;
  /** The notices to the visitor and to the people they stand in for (their manager, finance), oldest first. */
  readonly itemsOf: (visitor: string) => readonly OutboxItem[];
}

/**
 * An in-process channel for the playground: where an app would post to Slack or send mail, it
 * records the notice (kind, to whom, the call, its confirm-page link) in this process's memory, so
 * the page can show what would have been sent. A restart forgets it.
 *
 * `visitorOf` says whose outbox a principal's notices belong in (the manager and finance a visitor
 * plays are theirs), so one browser never sees another's.
 */
export function createOutbox(visitorOf: (principal: string) => string): Outbox {
  const items = new Map<string, OutboxItem[]>();
  const channel: Channel = {
    name: 'outbox',
    deliver(notice: Notice) {
      // A notice delivered again after a failure carries the same id: the outbox keeps it once.
      const visitor = visitorOf(notice.to);
      const known = items.get(visitor) ?? [];
      if (known.some((item) => item.id === notice.id)) return Promise.resolve();
      const kept = [...known, itemOf(notice)].slice(-KEPT);
      items.set(visitor, kept);
      return Promise.resolve();
    },
  };
  return {
    channel,
    itemsOf: (visitor) => items.get(visitor) ?? [],
  };
}

function itemOf(notice: Notice): OutboxItem {
  const { call } = notice;
  return {
    id: notice.id,
    kind: notice.kind,
    to: notice.to,
    from: notice.from.principal,
    call: {
      id: call.id,
      name: call.name,
      status: call.status,
      ...(call.input === undefined ? {} : { input: call.input }),
      ...(call.reason === undefined ? {} : { reason: call.reason.code }),
      ...(call.approval === undefined
        ? {}
        : { approvedBy: call.approval.approvedBy.map((vote) => vote.principal) }),
    },
    ...(notice.link === undefined ? {} : { link: notice.link }),
    at: Date.now(),
  };
}
