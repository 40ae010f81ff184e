import type { ToolCallRecord } from '@toolgate/core';
import type { Notice } from '@toolgate/server';
import { describe, expect, it, vi } from 'vitest';
import { emailChannel, noticeMail, type MailTransport } from '../../src/email/index.ts';

// As in an app that did not install it: any import of nodemailer fails.
vi.mock('nodemailer', () => {
  throw new Error("Cannot find package 'nodemailer'");
});

const NOW = 1_767_225_600_000;
const notice: Notice = {
  id: 'ntc_1',
  kind: 'asked',
  to: 'manager_1',
  call: {
    id: 'w1',
    name: 'wire',
    source: 'json',
    generatedId: false,
    createdAt: NOW,
    updatedAt: NOW,
    history: [],
    evicted: false,
    status: 'awaiting_approval',
    input: { amount_cents: 500_000 },
  } as unknown as ToolCallRecord,
  from: { principal: 'agent_7' },
};
const addressOf = () => 'manager@corp.example';
const from = 'Approvals <approvals@app.example>';

describe('the email channel without nodemailer installed', () => {
  it('renders a notice as a mail', async () => {
    const mail = await noticeMail(notice, { domain: 'app.example' });
    expect(mail.subject).toContain('wire');
    expect(mail.messageId).toBe('<ntc_1@app.example>');
  });

  it('sends through a transporter it is given', async () => {
    const sent: Parameters<MailTransport['sendMail']>[0][] = [];
    const transport: MailTransport = { sendMail: async (mail) => void sent.push(mail) };
    const channel = emailChannel({ transport, from, addressOf });
    await channel.deliver(notice, { signal: new AbortController().signal });
    expect(sent.map(({ to, from: sender }) => [to, sender])).toEqual([['manager@corp.example', from]]);
  });

  it('fails the delivery, saying what to install, when it must send from an SMTP URL', async () => {
    const channel = emailChannel({ transport: 'smtp://localhost:2525', from, addressOf });
    await expect(channel.deliver(notice, { signal: new AbortController().signal })).rejects.toThrow(
      'install nodemailer to send mail from an SMTP URL',
    );
  });
});
