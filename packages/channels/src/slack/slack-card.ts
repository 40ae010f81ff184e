import { inputHash } from '@toolgate/core';
import type { Notice } from '@toolgate/server';
import { ending, expiresText, headline, inputText, whoAsks } from '../notice-text.ts';

/** A Block Kit block, as Slack's `chat.postMessage` and `chat.update` take it. */
export type SlackBlock = Readonly<Record<string, unknown>>;

/**
 * What `chat.postMessage` / `chat.update` are given for a notice: `text` (the notification's
 * words, and what a client without blocks shows) and the card's `blocks`.
 *
 * @example
 * const { text, blocks } = await slackCard(notice);
 */
export interface SlackCard {
  readonly text: string;
  readonly blocks: readonly SlackBlock[];
}

/** The action ids of the card's buttons; the interactivity handler acts on the first two only. */
export const APPROVE = 'toolgate_approve';
export const DENY = 'toolgate_deny';
export const OPEN = 'toolgate_open';

/** Slack refuses a section's or a preformatted element's text over 3,000 characters; a margin below. */
const PIECE = 2900;
/** How many pieces of input a card holds (Slack allows 50 blocks a message, and messages of bounded size). */
const MOST_PIECES = 12;
/** Slack refuses a button value over 2,000 characters. */
const MOST_VALUE = 2000;

/**
 * What a card's Approve or Deny button carries back to the handler: the call and the hash of the
 * input the card showed, so a click decides exactly what the person read.
 *
 * @example
 * const value = buttonValue('w1', hash); // '{"call":"w1","hash":"…"}'
 */
export function buttonValue(callId: string, hash: string): string {
  return JSON.stringify({ call: callId, hash });
}

/**
 * Slack's Block Kit card of a notice: for a notice that asks, the tool, who asks (and for whom),
 * the whole input (in pieces under Slack's 3,000-character limit), its SHA-256 digest, when it
 * expires, Approve and Deny buttons bound to the call and that digest, and the confirm page's
 * link; for `decided` and `expired`, how the call ended and by whom, with no buttons. An input
 * too long for one message is shown in part and says so, and then offers no Approve: the person
 * reads it whole on the confirm page. Pure: a page can render what Slack would show.
 *
 * @example
 * const card = await slackCard(notice);
 * await client.chat.postMessage({ channel: 'U024BE7LH', ...card });
 */
export async function slackCard(notice: Notice): Promise<SlackCard> {
  const { call, kind } = notice;
  const title = headline(notice);
  const asking = kind === 'asked' || kind === 'reminder' || kind === 'escalated';
  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: title.slice(0, 150), emoji: false } },
    section(
      `*${mrkdwn(whoAsks(notice.from))}* asks to run *${mrkdwn(call.name)}* (call \`${mrkdwn(call.id)}\`).`,
    ),
  ];
  if (!asking) {
    const end = ending(call);
    blocks.push(section(`*${end.title}.* ${mrkdwn(end.sentence)}`));
    return { text: `${title}. ${end.sentence}`, blocks };
  }
  const text = inputText(call.input);
  const pieces = piecesOf(text);
  const whole = pieces.length <= MOST_PIECES;
  blocks.push(section('*Input*, exactly as it will run:'));
  for (const piece of pieces.slice(0, MOST_PIECES))
    blocks.push({
      type: 'rich_text',
      elements: [{ type: 'rich_text_preformatted', elements: [{ type: 'text', text: piece }] }],
    });
  if (!whole)
    blocks.push(
      section(
        `:warning: The input is ${text.length.toLocaleString('en')} characters; only the first ${(MOST_PIECES * PIECE).toLocaleString('en')} are shown here. Read it whole on the confirm page before you decide.`,
      ),
    );
  const hash = await inputHash(call.input);
  const expires = expiresText(call);
  blocks.push({
    type: 'context',
    elements: [
      { type: 'mrkdwn', text: `SHA-256 of the input: \`${hash}\`` },
      ...(expires === undefined ? [] : [{ type: 'mrkdwn', text: `Expires ${expiryMrkdwn(expires)}` }]),
    ],
  });
  const value = buttonValue(call.id, hash);
  const buttons: SlackBlock[] = [];
  if (value.length <= MOST_VALUE) {
    if (whole)
      buttons.push({ type: 'button', action_id: APPROVE, style: 'primary', text: plain('Approve'), value });
    buttons.push({ type: 'button', action_id: DENY, style: 'danger', text: plain('Deny'), value });
  }
  if (notice.link !== undefined)
    buttons.push({ type: 'button', action_id: OPEN, text: plain('Open the confirm page'), url: notice.link });
  if (buttons.length > 0) blocks.push({ type: 'actions', block_id: 'toolgate_vote', elements: buttons });
  return { text: `${title} ${whoAsks(notice.from)} asks to run ${call.name}.`, blocks };
}

/** The input's text cut into pieces Slack takes, each at most {@link PIECE} characters, none lost. */
function piecesOf(text: string): string[] {
  const pieces: string[] = [];
  let at = 0;
  while (at < text.length) {
    let end = Math.min(text.length, at + PIECE);
    // Never between the two halves of a character outside the BMP (an emoji).
    const next = text.charCodeAt(end);
    if (end < text.length && next >= 0xdc00 && next <= 0xdfff) end -= 1;
    pieces.push(text.slice(at, end));
    at = end;
  }
  return pieces.length === 0 ? [''] : pieces;
}

function section(text: string): SlackBlock {
  return { type: 'section', text: { type: 'mrkdwn', text } };
}

function plain(text: string): SlackBlock {
  return { type: 'plain_text', text, emoji: false };
}

/** Slack's mrkdwn reads `&`, `<` and `>` as markup; these three escapes are all it asks for. */
function mrkdwn(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** A time each reader's Slack shows in their own zone, falling back to UTC where it cannot. */
function expiryMrkdwn(iso: string): string {
  const seconds = Math.floor(Date.parse(iso) / 1000);
  return `<!date^${seconds}^{date_short_pretty} at {time}|${iso}>`;
}
