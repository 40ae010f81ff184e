import type Nodemailer from 'nodemailer';
import type { Channel } from '@toolgate/server';
import { abortable } from '../abortable.ts';
import { noticeMail } from './notice-mail.ts';

/**
 * What sends the mail: anything with nodemailer's `sendMail`, such as a transporter from
 * `nodemailer.createTransport(…)` (SMTP, SES, a provider's plugin).
 *
 * @example
 * const transport: MailTransport = nodemailer.createTransport({ host: 'smtp.example', port: 587 });
 */
export interface MailTransport {
  sendMail(mail: {
    from: string;
    to: string;
    subject: string;
    text: string;
    html: string;
    messageId: string;
    inReplyTo?: string;
    references?: string;
  }): Promise<unknown>;
}

/**
 * The options of {@link emailChannel}.
 *
 * @example
 * const options: EmailChannelOptions = { transport: 'smtps://user:pass@smtp.example', from: 'Approvals <approvals@app.example>', addressOf };
 */
export interface EmailChannelOptions {
  /** An SMTP URL (`smtp://…`, `smtps://…`) or a transport with `sendMail` (`nodemailer.createTransport(…)`). */
  readonly transport: string | MailTransport;
  /** The sender, as the mail shows it: `Approvals <approvals@app.example>`. Its domain names the Message-IDs. */
  readonly from: string;
  /** A principal's address, or `undefined` when the app has none: that delivery fails, and is tried again. */
  readonly addressOf: (principal: string) => string | undefined | Promise<string | undefined>;
  /** The channel's name in the gate and in the audit trail (default `email`). */
  readonly name?: string;
}

/** An SMTP server that does not answer is given up on after this, whatever the gate's abort does. */
const SMTP_TIMEOUT_MS = 15_000;

/**
 * Reaches approvers by mail: one message per notice, in text and HTML, with the tool, who asks,
 * the exact input, its digest, when it expires and the confirm page's link (never a link that
 * decides when opened). The notice's id is the Message-ID, so a repeat is the same message; a
 * reminder, an escalation and the end reply in the thread of the first mail. A principal
 * `addressOf` does not know, or an SMTP server that refuses or hangs, fails the delivery: the gate
 * tries it again with backoff and audits each failure, and the call keeps waiting.
 * `nodemailer` is an optional peer dependency, loaded only to make a transport from an SMTP URL:
 * an app that gives its own transporter, or only renders {@link noticeMail}, need not install it.
 *
 * @example
 * const mail = emailChannel({
 *   transport: process.env.SMTP_URL ?? 'smtp://localhost:25',
 *   from: 'Approvals <approvals@app.example>',
 *   addressOf: (principal) => directory.emailOf(principal),
 * });
 * const gate = createServerGate({ tools, ledger, links, channels: [mail] });
 */
export function emailChannel(options: EmailChannelOptions): Channel {
  const { from, addressOf } = options;
  if (typeof from !== 'string' || !from.includes('@'))
    throw new TypeError('emailChannel: `from` must be an address, e.g. "Approvals <approvals@app.example>".');
  if (typeof addressOf !== 'function')
    throw new TypeError('emailChannel: `addressOf` must map a principal to their address.');
  const given = options.transport;
  if (typeof given !== 'string' && typeof given?.sendMail !== 'function')
    throw new TypeError('emailChannel: `transport` must be an SMTP URL or have a `sendMail` function.');
  // Made at the first delivery, so that building the channel needs nothing it does not use yet.
  let transport: Promise<MailTransport> | undefined;
  const transportNow = () =>
    (transport ??= typeof given === 'string' ? smtpTransport(given) : Promise.resolve(given));
  const domain = /@([^>\s]+)>?\s*$/u.exec(from)?.[1] ?? 'toolgate.invalid';
  return {
    name: options.name ?? 'email',
    async deliver(notice, { signal }) {
      const to = await addressOf(notice.to);
      if (typeof to !== 'string' || to === '') throw new Error(`no address for principal "${notice.to}"`);
      const mail = await noticeMail(notice, { domain });
      const sender = await abortable(transportNow(), signal);
      await abortable(sender.sendMail({ from, to, ...mail }), signal);
    },
  };
}

async function smtpTransport(url: string): Promise<MailTransport> {
  let nodemailer: typeof Nodemailer;
  try {
    nodemailer = (await import('nodemailer')).default;
  } catch (error) {
    throw new Error(
      'emailChannel: install nodemailer to send mail from an SMTP URL (npm install nodemailer), or give `transport` an object with `sendMail`.',
      { cause: error },
    );
  }
  return nodemailer.createTransport({
    url,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  });
}
