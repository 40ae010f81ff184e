import { inputHash } from '@toolgate/core';
import { noticeId, type Notice } from '@toolgate/server';
import { ending, expiresText, headline, inputText, whoAsks } from '../notice-text.ts';

/**
 * A notice as a mail: its subject, a plain-text and an HTML body saying the same, and the headers
 * that thread it (`messageId` is the notice's id; a reminder, an escalation and the end answer the
 * first mail of the call to that person).
 *
 * @example
 * const mail = await noticeMail(notice, { domain: 'app.example' });
 * await transporter.sendMail({ from, to, ...mail });
 */
export interface NoticeMail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** `<notice.id@domain>`: a repeat of the notice is the same message. */
  readonly messageId: string;
  readonly inReplyTo?: string;
  readonly references?: string;
}

/**
 * Renders a notice as a mail: the tool, who asks (and for whom), the exact input, its SHA-256
 * digest, when it expires and the confirm page's link (opening it decides nothing: the page has
 * the Approve and Deny buttons), or, for `decided` and `expired`, how the call ended and by whom.
 * Everything taken from the call is escaped in the HTML. Pure: a page can show what was sent.
 *
 * @example
 * const { subject, text, html } = await noticeMail(notice, { domain: 'app.example' });
 */
export async function noticeMail(notice: Notice, { domain = 'toolgate.invalid' } = {}): Promise<NoticeMail> {
  const { call, kind } = notice;
  const asking = kind === 'asked' || kind === 'reminder' || kind === 'escalated';
  const first = `<${noticeId(call.id, 'asked', 0, notice.to)}@${domain}>`;
  const thread = kind === 'asked' ? {} : { inReplyTo: first, references: first };
  const subject = `${kind === 'asked' ? '' : 'Re: '}Approve ${call.name}? ${whoAsks(notice.from)} asks (call ${call.id})`;
  const title = headline(notice);
  const asks = `${whoAsks(notice.from)} asks to run ${call.name} (call ${call.id}).`;
  const messageId = `<${notice.id}@${domain}>`;
  if (!asking) {
    const end = ending(call);
    const text = `${title}\n\n${asks}\n${end.sentence}\n\nThere is nothing left for you to decide.\n`;
    const html = page(
      `<h1>${escape(title)}</h1><p>${escape(asks)}</p><p><strong>${escape(end.sentence)}</strong></p><p>There is nothing left for you to decide.</p>`,
    );
    return { subject, text, html, messageId, ...thread };
  }
  const input = inputText(call.input);
  const hash = await inputHash(call.input);
  const expires = expiresText(call);
  const intro =
    kind === 'reminder'
      ? 'This call still waits for your decision.'
      : kind === 'escalated'
        ? 'Nobody decided this call in time, so you are asked too.'
        : 'This call waits for your decision.';
  const decide =
    notice.link === undefined
      ? 'Decide in the app: approve or deny it there.'
      : 'Decide on the confirm page (opening it decides nothing; it has the Approve and Deny buttons):';
  const text = [
    title,
    '',
    asks,
    intro,
    '',
    'Input, exactly as it will run:',
    input,
    '',
    `SHA-256 of the input: ${hash}`,
    ...(expires === undefined ? [] : [`Expires: ${expires}`]),
    '',
    decide,
    ...(notice.link === undefined ? [] : [notice.link]),
    '',
  ].join('\n');
  const html = page(
    [
      `<h1>${escape(title)}</h1>`,
      `<p>${escape(asks)} ${escape(intro)}</p>`,
      '<p>Input, exactly as it will run:</p>',
      `<pre style="white-space:pre-wrap;overflow-wrap:anywhere">${escape(input)}</pre>`,
      `<p>SHA-256 of the input: <code>${hash}</code></p>`,
      expires === undefined ? '' : `<p>Expires: ${escape(expires)}</p>`,
      notice.link === undefined
        ? `<p>${escape(decide)}</p>`
        : `<p><a href="${escape(notice.link)}">Open the confirm page</a> to approve or deny (opening it decides nothing).</p>`,
    ].join('\n'),
  );
  return { subject, text, html, messageId, ...thread };
}

function page(body: string): string {
  return `<!doctype html><html><body style="font-family:system-ui,sans-serif">\n${body}\n</body></html>`;
}

/** What HTML reads as markup, in text and in a double-quoted attribute. */
function escape(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}
