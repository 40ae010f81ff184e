import { WebClient, type KnownBlock } from '@slack/web-api';
import type { Channel, Notice, ServerGate } from '@toolgate/server';
import { abortable } from '../abortable.ts';
import { slackCard } from './slack-card.ts';
import { slackVotes } from './slack-votes.ts';

/**
 * The options of {@link slackChannel}.
 *
 * @example
 * const options: SlackChannelOptions = { token, signingSecret, slackUserOf, principalOf, gate: () => gate };
 */
export interface SlackChannelOptions {
  /** The app's bot token (`xoxb-…`), with the `chat:write` scope. */
  readonly token: string;
  /** The app's signing secret (Basic Information → App Credentials): every click is checked with it. */
  readonly signingSecret: string;
  /** The Slack user id (`U024BE7LH`) of a principal, or `undefined` when they have none (the delivery fails, and is tried again). */
  readonly slackUserOf: (principal: string) => string | undefined | Promise<string | undefined>;
  /** The principal of a Slack user id, or `undefined` for someone the app does not know: their click is refused. */
  readonly principalOf: (slackUserId: string) => string | undefined | Promise<string | undefined>;
  /** The gate clicks decide on. A function, read at each click, since the gate is made with this channel in its `channels`. */
  readonly gate?: () => ServerGate | undefined;
  /** Slack's Web API base (default `https://slack.com/api/`); a test points it at a fake. */
  readonly apiUrl?: string;
  /** The channel's name in the gate and in the audit trail (default `slack`). */
  readonly name?: string;
  /** How long `handler` waits for a vote to be decided before it answers Slack (default 2,500 ms; Slack gives up at 3 s). */
  readonly ackMs?: number;
  /** Milliseconds since the epoch, for the signature's five minutes (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * A Slack channel: a {@link Channel} for the gate's `channels`, and `handler`, Slack's
 * interactivity Request URL for the cards' buttons.
 *
 * @example
 * app.post('/slack/interactivity', (c) => slack.handler(c.req.raw));
 */
export interface SlackChannel extends Channel {
  readonly update: NonNullable<Channel['update']>;
  /** Slack's interactivity Request URL: give it the request as Slack sent it (the raw body is signed). */
  readonly handler: (request: Request) => Promise<Response>;
}

/** How many notices' refs a channel remembers, so a delivery tried again in this process does not post twice. */
const REMEMBERED = 1000;

/**
 * Reaches approvers in Slack: each notice that asks is a direct message from the app with a card
 * (the tool, who asks, the whole input, its digest, when it expires, Approve / Deny and the
 * confirm page's link), and once the call ends every card of it is updated to say how, with no
 * buttons left. `handler` takes the clicks: the signature is checked (`v0`, five minutes), the
 * user mapped with `principalOf` (never by e-mail address), and the vote decided through the
 * gate with the input hash the card showed. The Web API client (`@slack/web-api`, an optional
 * peer dependency) is made with retries off: the gate retries a notice that failed.
 *
 * @example
 * const slack = slackChannel({
 *   token: process.env.SLACK_BOT_TOKEN!,
 *   signingSecret: process.env.SLACK_SIGNING_SECRET!,
 *   slackUserOf: (principal) => directory.slackIdOf(principal),
 *   principalOf: (slackUserId) => directory.principalOfSlack(slackUserId),
 *   gate: () => gate,
 * });
 * const gate = createServerGate({ tools, ledger, channels: [slack] });
 */
export function slackChannel(options: SlackChannelOptions): SlackChannel {
  const { token, signingSecret, slackUserOf, principalOf } = options;
  if (typeof token !== 'string' || token === '')
    throw new TypeError('slackChannel: `token` must be the app’s bot token (xoxb-…).');
  if (typeof signingSecret !== 'string' || signingSecret === '')
    throw new TypeError(
      'slackChannel: `signingSecret` must be the app’s signing secret, to check every click.',
    );
  if (typeof slackUserOf !== 'function' || typeof principalOf !== 'function')
    throw new TypeError(
      'slackChannel: `slackUserOf` and `principalOf` must be functions mapping principals and Slack users.',
    );
  const name = options.name ?? 'slack';
  const ackMs = options.ackMs ?? 2500;
  const client = new WebClient(token, {
    ...(options.apiUrl === undefined ? {} : { slackApiUrl: options.apiUrl }),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: 10_000,
  });
  const refs = new Map<string, string>();
  const votes = slackVotes({
    name,
    signingSecret,
    principalOf,
    gate: options.gate,
    now: options.now ?? Date.now,
  });

  return {
    name,
    async deliver(notice, { signal }) {
      const known = refs.get(notice.id);
      if (known !== undefined) return { ref: known };
      const user = await slackUserOf(notice.to);
      if (typeof user !== 'string' || user === '')
        throw new Error(`no Slack user for principal "${notice.to}"`);
      const card = await slackCard(notice);
      const answer = await abortable(
        client.chat.postMessage({
          channel: user,
          text: card.text,
          blocks: [...card.blocks] as unknown as KnownBlock[],
          unfurl_links: false,
        }),
        signal,
      );
      if (typeof answer.channel !== 'string' || typeof answer.ts !== 'string')
        throw new Error('Slack answered chat.postMessage without the message’s channel and ts');
      // The gate hands every card's ref of the call to update at the end, whichever process posted it.
      const ref = `${answer.channel}/${answer.ts}`;
      remember(refs, notice.id, ref);
      return { ref };
    },
    async update(notice: Notice, ref: string, { signal }) {
      const card = await slackCard(notice);
      const blocks = [...card.blocks] as unknown as KnownBlock[];
      for (const one of ref.split(' ')) {
        const [channel, ts] = one.split('/');
        if (channel === undefined || ts === undefined)
          throw new Error(`"${one}" is not a Slack message's channel/ts`);
        await abortable(client.chat.update({ channel, ts, text: card.text, blocks }), signal).catch(
          (error: unknown) => {
            // A card someone deleted has nothing left to update; any other failure is tried again.
            if ((error as { data?: { error?: unknown } }).data?.error !== 'message_not_found') throw error;
          },
        );
      }
    },
    handler: (request) => votes(request, ackMs),
  };
}

/** Remembers a value under a key, forgetting the oldest past {@link REMEMBERED}. */
function remember<T>(map: Map<string, T>, key: string, value: T): void {
  map.set(key, value);
  if (map.size > REMEMBERED) map.delete(map.keys().next().value ?? '');
}
