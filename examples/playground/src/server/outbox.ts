import { emailChannel, noticeMail } from '@toolgate/channels/email';
import { slackCard } from '@toolgate/channels/slack';
import type { Channel, Notice } from '@toolgate/server';
import type { OutboxItem } from '../chat/outbox-item.ts';

/** The domain the mails' Message-IDs are minted under: the playground sends none. */
const MAIL_DOMAIN = 'playground.toolgate.invalid';

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
 * records the notice (kind, to whom, the call, its confirm-page link) in this process's memory,
 * with the Slack card and the mail `@toolgate/channels` would make of it, so the page can show
 * what would have been sent. A restart forgets it.
 *
 * `visitorOf` says whose outbox a principal's notices belong in (the manager and finance a visitor
 * plays are theirs), so one browser never sees another's.
 */
export function createOutbox(visitorOf: (principal: string) => string): Outbox {
  const items = new Map<string, OutboxItem[]>();
  const channel: Channel = {
    name: 'outbox',
    async deliver(notice: Notice) {
      // Rendered here, where the renderers' server imports belong; the page only draws the result.
      const item = await itemOf(notice);
      // A notice delivered again after a failure carries the same id: the outbox keeps it once.
      const visitor = visitorOf(notice.to);
      const known = items.get(visitor) ?? [];
      if (known.some((kept) => kept.id === notice.id)) return;
      items.set(visitor, [...known, item].slice(-KEPT));
    },
  };
  return {
    channel,
    itemsOf: (visitor) => items.get(visitor) ?? [],
  };
}

/**
 * The playground's mail channel, for a local SMTP server such as a mail catcher: nobody here has
 * an address, so each person gets one made from their principal (`visitor-1f…-manager@…`).
 */
export function playgroundMail(smtpUrl: string): Channel {
  return emailChannel({
    transport: smtpUrl,
    from: `Toolgate playground <approvals@${MAIL_DOMAIN}>`,
    addressOf: (principal) => `${principal.replace(/[^\w.-]/g, '-')}@${MAIL_DOMAIN}`,
  });
}

async function itemOf(notice: Notice): Promise<OutboxItem> {
  const { call } = notice;
  const [slack, mail] = await Promise.all([slackCard(notice), noticeMail(notice, { domain: MAIL_DOMAIN })]);
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
    slack: { text: slack.text, blocks: slack.blocks },
    mail: { subject: mail.subject, text: mail.text, html: mail.html },
  };
}
