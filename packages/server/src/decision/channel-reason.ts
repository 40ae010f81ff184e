import type { RefusalCode } from './decision.ts';

/**
 * Why a channel refused a vote before it reached `approve` or `deny`: a link this server did not
 * sign (`invalid_link`), one past its expiry (`link_expired`), a vote naming another call than its
 * link (`wrong_call`), or someone signed in as another principal than the link's
 * (`wrong_principal`), or a request whose signature does not hold (`invalid_signature`: a Slack
 * click not signed with the app's signing secret, or signed more than five minutes ago).
 *
 * @example
 * const code: ChannelRefusalCode = 'link_expired';
 */
export type ChannelRefusalCode =
  'invalid_link' | 'link_expired' | 'wrong_call' | 'wrong_principal' | 'invalid_signature';

/**
 * The reason of a refused vote's event: its code and sentence, the channel, and who it was from.
 *
 * @example
 * if ('channel' in (event.reason ?? {})) console.log(`refused on ${event.reason.channel}`);
 */
export interface ChannelReason {
  readonly code: ChannelRefusalCode | RefusalCode;
  readonly message: string;
  readonly channel: string;
  readonly principal?: string;
  readonly user?: string;
}

/**
 * A vote a channel refused, for the audit trail. `callId` only when the channel can trust what it
 * says about the call (a link whose signature holds); a request it could not authenticate names
 * no call, and is written as an event of the channel.
 *
 * @example
 * await serverGate.refuseVote({ channel: 'slack', code: 'invalid_link', message: 'bad X-Slack-Signature', user: 'U024BE7LH' });
 */
export interface VoteRefusal {
  /** The channel's name: `links`, `slack`, … */
  readonly channel: string;
  readonly code: ChannelRefusalCode | RefusalCode;
  readonly message: string;
  readonly callId?: string;
  /** The principal the vote would have been in the name of, when the channel knows it. */
  readonly principal?: string;
  /** The channel's own id of who sent it (a Slack user id), when it has one. */
  readonly user?: string;
}

/**
 * Where a vote was given, when a channel passes it on to `approve` or `deny`: the channel's name and
 * its own id of the person (a Slack user id). A vote the gate refuses is then audited once, as an
 * event naming the channel, the outside user and the principal, as a refusal by the channel is.
 *
 * @example
 * await serverGate.approve(id, { principal, inputHash, via: { channel: 'slack', user: 'U024BE7LH' } });
 */
export interface VoteVia {
  readonly channel: string;
  readonly user?: string;
}

/**
 * Where a refused vote came from, for its event's reason: the channel, the principal and the outside user.
 *
 * @example
 * const reason = { code, message, ...cameFrom('manager_1', { channel: 'slack', user: 'U024BE7LH' }) };
 */
export function cameFrom(
  principal: string,
  via: VoteVia,
): Pick<ChannelReason, 'channel' | 'principal' | 'user'> {
  return { channel: via.channel, principal, ...(via.user === undefined ? {} : { user: via.user }) };
}

/**
 * `via` as the gate keeps it, or a TypeError for one a channel built wrong: it is written into the
 * record and the audit trail, so a malformed one is a bug to see, not a value to store.
 *
 * @example
 * const via = checkedVia('serverGate.approve', options.via);
 */
export function checkedVia(where: string, via: unknown): VoteVia | undefined {
  if (via === undefined) return undefined;
  const { channel, user } = (typeof via === 'object' && via !== null ? via : {}) as Record<string, unknown>;
  const fits = (value: unknown) => typeof value === 'string' && value !== '' && value.length <= 200;
  if (!fits(channel) || (user !== undefined && !fits(user)))
    throw new TypeError(
      `${where}: \`via\` must be { channel: string, user?: string } (non-empty, at most 200 characters each).`,
    );
  return user === undefined
    ? { channel: channel as string }
    : { channel: channel as string, user: user as string };
}
