import { defineTool, inputHash } from '@toolgate/core';
import { approvalLinks, createServerGate, type Ledger } from '@toolgate/server';
import { createFakeClock } from '@toolgate/test-utils';
import { afterEach, expect, it } from 'vitest';
import { emailChannel } from '../../src/email/index.ts';
import { describeLedgers } from '../../../server/test/support/ledgers.ts';
import { smtpServer } from '../support/smtp.ts';

const SECOND = 1000;
const BASE = 'https://app.example/api/toolgate';
const ADDRESSES: Record<string, string> = {
  manager_1: 'manager@corp.example',
  finance_1: 'finance@corp.example',
};
const MEMO = '<script>alert("x")</script> & \'quotes\'';
const WIRE = { id: 'w1', name: 'wire', arguments: { iban: 'DE02', amount_cents: 500_000, memo: MEMO } };

const opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of opened.splice(0)) await close();
});

async function setup(ledger: Ledger, { unknown = [] as string[], leaseMs = 30 * SECOND } = {}) {
  const clock = createFakeClock();
  const smtp = await smtpServer();
  const wire = defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { iban: { type: 'string' }, amount_cents: { type: 'integer' }, memo: { type: 'string' } },
      required: ['iban', 'amount_cents'],
      additionalProperties: false,
    },
    approvers: () => ['manager_1', 'finance_1'],
    remindAfterMs: 10 * SECOND,
    approvalTtlMs: 60 * SECOND,
    execute: () => 'sent',
  });
  const links = approvalLinks({ secret: 'a secret of thirty-two bytes or more', baseUrl: BASE, clock });
  const mail = emailChannel({
    transport: smtp.url,
    from: 'Approvals <approvals@app.example>',
    addressOf: (principal) => (unknown.includes(principal) ? undefined : ADDRESSES[principal]),
  });
  const errors: unknown[] = [];
  const gate = createServerGate({
    tools: [wire],
    ledger,
    clock,
    leaseMs,
    recover: false,
    links,
    channels: [mail],
    onError: (error) => errors.push(error),
  });
  opened.push(async () => {
    await gate.close();
    await smtp.close();
  });
  return { gate, smtp, clock, ledger };
}

/** The failures of notices to deliver, in the hash chain, in order. */
async function failures(ledger: Ledger) {
  return (await ledger.eventsAfter(0))
    .filter((event) => event.reason?.code === 'notice_failed')
    .map((event) => event.reason?.message ?? '');
}

describeLedgers(
  'notices by mail',
  (target) => {
    it('mails each asked approver once, in text and escaped HTML, with who asks, the exact input, its digest, the expiry and the confirm page', async () => {
      const { gate, smtp } = await setup(await (await target.fresh()).open());
      await gate.propose(WIRE, { session: 'chat_a', principal: 'agent_7', onBehalfOf: 'alice' });
      await gate.recover();
      expect(smtp.received.map(({ to }) => to).sort()).toEqual([
        ['finance@corp.example'],
        ['manager@corp.example'],
      ]);
      const { mail } = smtp.received.find(({ to }) => to[0] === 'manager@corp.example') ?? {};
      expect(mail?.from?.text).toBe('"Approvals" <approvals@app.example>');
      expect(mail?.subject).toBe('Approve wire? agent_7 for alice asks (call w1)');
      expect(mail?.messageId).toMatch(/^<ntc_[0-9a-f]{32}@app\.example>$/u);
      expect(mail?.inReplyTo).toBeUndefined();
      const text = mail?.text ?? '';
      expect(text).toContain('agent_7 for alice asks to run wire (call w1).');
      expect(text).toContain(JSON.stringify(WIRE.arguments, null, 2));
      expect(text).toContain(`SHA-256 of the input: ${await inputHash(WIRE.arguments)}`);
      expect(text).toContain('Expires: 2026-01-01T00:01:00.000Z');
      const link = /https:\/\/app\.example\/api\/toolgate\/links\/\S+/u.exec(text)?.[0];
      expect(link).toBeDefined();
      const html = String(mail?.html);
      expect(html).not.toContain('<script>');
      // The input as JSON (its quotes escaped with a backslash), then as HTML.
      expect(html).toContain('&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;');
      expect(html).toContain(`<a href="${link}">Open the confirm page</a>`);
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    });

    it('replies in the thread of the first mail with the reminder, and tells each approver when it is over', async () => {
      const { gate, smtp, clock } = await setup(await (await target.fresh()).open());
      await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      await gate.recover();
      clock.advance(10 * SECOND);
      await gate.recover();
      await gate.recover();
      const toManager = () =>
        smtp.received.filter(({ to }) => to[0] === 'manager@corp.example').map(({ mail }) => mail);
      const [asked, reminder] = toManager();
      expect(reminder?.subject).toBe('Re: Approve wire? alice asks (call w1)');
      expect(reminder?.text).toContain('This call still waits for your decision.');
      expect(reminder?.inReplyTo).toBe(asked?.messageId);
      expect(reminder?.references).toBe(asked?.messageId);
      expect(reminder?.messageId).not.toBe(asked?.messageId);
      await gate.deny('w1', { principal: 'finance_1', reason: 'wrong account' });
      await gate.recover();
      await gate.recover();
      const over = toManager()[2];
      expect(over?.inReplyTo).toBe(asked?.messageId);
      expect(over?.text).toContain('Denied: wrong account. It will not run.');
      expect(over?.text).toContain('There is nothing left for you to decide.');
      expect(over?.text).not.toContain('/links/');
    });

    it('fails the delivery to a principal it has no address for, audited and tried again, and the call keeps waiting', async () => {
      const { gate, smtp, ledger } = await setup(await (await target.fresh()).open(), {
        unknown: ['finance_1'],
      });
      await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      await gate.recover();
      expect(smtp.received.map(({ to }) => to[0])).toEqual(['manager@corp.example']);
      expect(await failures(ledger)).toEqual([
        expect.stringMatching(
          /to "finance_1" through "email" not delivered \(attempt 1\): the channel threw: no address for principal "finance_1"; tried again in 1000 ms/u,
        ),
      ]);
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    });

    it('fails the delivery when the SMTP server refuses it (550), and mails it once the server takes it', async () => {
      const { gate, smtp, ledger, clock } = await setup(await (await target.fresh()).open());
      smtp.state.mode = 'refuse';
      await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      await gate.recover();
      expect(smtp.received).toEqual([]);
      const failed = await failures(ledger);
      expect(failed).toHaveLength(2);
      expect(failed.every((message) => /550/u.test(message))).toBe(true);
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      smtp.state.mode = 'accept';
      clock.advance(SECOND);
      await gate.recover();
      expect(smtp.received.map(({ to }) => to[0]).sort()).toEqual([
        'finance@corp.example',
        'manager@corp.example',
      ]);
    });

    it('gives up on an SMTP server that never answers at half a lease, and the call keeps waiting', async () => {
      const { gate, smtp, ledger, clock } = await setup(await (await target.fresh()).open(), {
        leaseMs: 4 * SECOND,
      });
      smtp.state.mode = 'hang';
      await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      const hanging = gate.recover();
      await smtp.state.reached.promise;
      clock.advance(2 * SECOND);
      await hanging;
      expect(await failures(ledger)).toContainEqual(
        expect.stringMatching(
          /through "email" not delivered \(attempt 1\): the channel did not answer within 2000 ms/u,
        ),
      );
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
    });
  },
  { shared: true },
);
