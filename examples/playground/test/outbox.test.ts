// The Outbox records what the server gate's channel is given, per visitor: a browser sees its own
// notices (to itself, its manager and finance), never another's, and a notice delivered again
// after a failure is shown once.
import type { ToolCallRecord } from '@toolgate/core';
import type { Notice } from '@toolgate/server';
import { expect, it } from 'vitest';
import { createOutbox } from '../src/server/outbox.ts';

const visitorOf = (principal: string) => principal.replace(/:(manager|finance)$/, '');
const signal = new AbortController().signal;

const call = {
  id: 'call_1',
  name: 'large_transfer',
  status: 'awaiting_approval',
  input: { to: 'roofer@example.com', amount_cents: 8000 },
} as unknown as ToolCallRecord;

const notice = (id: string, to: string, extra: Partial<Notice> = {}): Notice => ({
  id,
  kind: 'asked',
  to,
  call,
  from: { principal: 'visitor-a' },
  ...extra,
});

it("a visitor's outbox holds the notices to their manager and finance with the call and its link, and none of another visitor's", async () => {
  const outbox = createOutbox(visitorOf);
  await outbox.channel.deliver(
    notice('n1', 'visitor-a:manager', { link: 'http://127.0.0.1:5173/api/toolgate/links/t1' }),
    { signal },
  );
  await outbox.channel.deliver(notice('n2', 'visitor-a:finance', { kind: 'escalated' }), { signal });
  await outbox.channel.deliver(notice('n3', 'visitor-b:manager'), { signal });

  expect(outbox.itemsOf('visitor-a')).toEqual([
    {
      id: 'n1',
      kind: 'asked',
      to: 'visitor-a:manager',
      from: 'visitor-a',
      call: { id: 'call_1', name: 'large_transfer', status: 'awaiting_approval', input: call.input },
      link: 'http://127.0.0.1:5173/api/toolgate/links/t1',
      at: expect.any(Number) as number,
      slack: expect.any(Object) as object,
      mail: expect.any(Object) as object,
    },
    expect.objectContaining({ id: 'n2', kind: 'escalated', to: 'visitor-a:finance' }),
  ]);
  expect(outbox.itemsOf('visitor-b').map((item) => item.id)).toEqual(['n3']);
  expect(outbox.itemsOf('visitor-c')).toEqual([]);
});

it('a notice delivered again under the same id is kept once', async () => {
  const outbox = createOutbox(visitorOf);
  await outbox.channel.deliver(notice('n1', 'visitor-a:manager'), { signal });
  await outbox.channel.deliver(notice('n1', 'visitor-a:manager'), { signal });
  expect(outbox.itemsOf('visitor-a').map((item) => item.id)).toEqual(['n1']);
});

it('a decided notice says who approved the call', async () => {
  const outbox = createOutbox(visitorOf);
  const approved = {
    ...call,
    status: 'executing',
    approval: { required: 1, left: 0, approvedBy: [{ principal: 'visitor-a:manager', at: 1 }] },
  } as unknown as ToolCallRecord;
  await outbox.channel.deliver(notice('n9', 'visitor-a:manager', { kind: 'decided', call: approved }), {
    signal,
  });
  expect(outbox.itemsOf('visitor-a')[0]?.call).toMatchObject({
    status: 'executing',
    approvedBy: ['visitor-a:manager'],
  });
});

it("an asked notice carries the Slack card and the mail channels would send, each with the call's input and the confirm page's link", async () => {
  const outbox = createOutbox(visitorOf);
  const link = 'http://127.0.0.1:5173/api/toolgate/links/t1';
  await outbox.channel.deliver(notice('n1', 'visitor-a:manager', { link }), { signal });
  const [item] = outbox.itemsOf('visitor-a');

  const blocks = JSON.stringify(item?.slack.blocks);
  expect(item?.slack.blocks[0]).toMatchObject({ type: 'header' });
  expect(blocks).toContain('roofer@example.com');
  expect(blocks).toContain('8000');
  expect(item?.slack.blocks.at(-1)).toMatchObject({
    type: 'actions',
    elements: [
      { text: { text: 'Approve' } },
      { text: { text: 'Deny' } },
      { text: { text: 'Open the confirm page' }, url: link },
    ],
  });

  expect(item?.mail.subject).toContain('large_transfer');
  expect(item?.mail.text).toContain('roofer@example.com');
  expect(item?.mail.text).toContain(link);
  expect(item?.mail.html).toContain('roofer@example.com');
  expect(item?.mail.html).toContain(`href="${link}"`);
});
