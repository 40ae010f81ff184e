import type { ToolCallRecord } from '@toolgate/core';
import { noticeId, type Notice } from '@toolgate/server';
import { describe, expect, it } from 'vitest';
import { noticeMail } from '../../src/email/index.ts';
import { waitingCall } from '../support/records.ts';

const call = (extra: Partial<ToolCallRecord> = {}): ToolCallRecord =>
  waitingCall({ memo: '</pre><img src=x onerror=alert(1)>' }, extra);

const notice = (more: Partial<Notice>): Notice => ({
  id: 'ntc_9',
  kind: 'asked',
  to: 'director_1',
  call: call(),
  from: { principal: 'agent_7', onBehalfOf: 'alice' },
  ...more,
});

describe('noticeMail', () => {
  it('escapes the input and the names in the HTML, so nothing from the call becomes markup', async () => {
    const mail = await noticeMail(notice({ from: { principal: '<b>agent</b>' } }), { domain: 'app.example' });
    expect(mail.html).not.toMatch(/<img|<b>/u);
    expect(mail.html).toContain('&lt;/pre&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(mail.html).toContain('&lt;b&gt;agent&lt;/b&gt; asks to run wire');
    expect(mail.text).toContain('"memo": "</pre><img src=x onerror=alert(1)>"');
  });

  it('says to decide in the app when the gate has no links, and offers no link at all', async () => {
    const mail = await noticeMail(notice({}));
    expect(mail.text).toContain('Decide in the app: approve or deny it there.');
    expect(mail.html).not.toContain('<a ');
  });

  it('threads an escalation under the first mail of the call to that person, and says why they are asked', async () => {
    const mail = await noticeMail(notice({ kind: 'escalated' }), { domain: 'app.example' });
    const first = `<${noticeId('w1', 'asked', 0, 'director_1')}@app.example>`;
    expect(mail).toMatchObject({ messageId: '<ntc_9@app.example>', inReplyTo: first, references: first });
    expect(mail.subject).toBe('Re: Approve wire? agent_7 for alice asks (call w1)');
    expect(mail.text).toContain('Nobody decided this call in time, so you are asked too.');
  });

  it('tells an approver a call expired, with nothing left to decide and no link', async () => {
    const expired = call({
      status: 'cancelled',
      reason: { code: 'approval_expired', message: 'the approval expired' },
    });
    const mail = await noticeMail(
      notice({ kind: 'expired', call: expired, link: 'https://app.example/l/x' }),
    );
    expect(mail.text).toBe(
      'wire: Expired\n\nagent_7 for alice asks to run wire (call w1).\nNobody decided in time; it was cancelled and will not run.\n\nThere is nothing left for you to decide.\n',
    );
    expect(mail.html).not.toContain('https://app.example/l/x');
  });
});
