// A delivery a channel took is recorded after it (with the gate's next move, or a moment later):
// closing the gate in between still records it, so no notice goes out again after a clean close.
import { defineTool } from '@toolgate/core';
import { createFakeClock, deferred } from '@toolgate/test-utils';
import { expect, it, vi } from 'vitest';
import { createServerGate, type Channel, type Ledger, type Notice } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const SECOND = 1000;
const WIRE = { id: 'w1', name: 'wire', arguments: { iban: 'DE02', amount_cents: 500_000 } };

function setup(ledger: Ledger, channel: Channel) {
  const clock = createFakeClock();
  const wire = defineTool({
    name: 'wire',
    inputSchema: {
      type: 'object',
      properties: { iban: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['iban', 'amount_cents'],
    },
    approvers: () => ['manager_1'],
    approvalTtlMs: 600 * SECOND,
    execute: (input) => ({ sent: input.amount_cents }),
  });
  const gate = createServerGate({
    tools: [wire],
    ledger,
    clock,
    recover: false,
    leaseMs: 10 * SECOND,
    channels: [channel],
  });
  return { gate, clock };
}

function takingChannel() {
  const seen: Notice[] = [];
  const took = deferred();
  const channel: Channel = {
    name: 'chat',
    deliver(notice) {
      seen.push(notice);
      took.resolve();
      return Promise.resolve({ ref: `msg-${notice.to}` });
    },
  };
  return { channel, seen, took };
}

describeLedgers('a delivery taken just before the gate closes', (target) => {
  it('is recorded by close(), and not delivered again once its claim has run out', async () => {
    const store = await target.fresh();
    const ledger = await store.open();
    const first = takingChannel();
    const { gate, clock } = setup(ledger, first.channel);
    await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
    // The pause after which a taken delivery is recorded on its own never ends here: only close() can record it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      // The commit pokes the notice keeper; its pass runs on the gate's clock.
      clock.advance(0);
      await first.took.promise;
      // The channel's answer reaches the gate before it closes (a close mid-delivery writes nothing).
      for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      await gate.close();
    } finally {
      vi.useRealTimers();
    }
    expect(first.seen.map((notice) => `${notice.kind}:${notice.to}`)).toEqual(['asked:manager_1']);

    const rows = await ledger.db.selectFrom('toolgate_notices').select(['delivered_at', 'ref']).execute();
    expect(rows).toEqual([{ delivered_at: expect.any(Number), ref: 'msg-manager_1' }]);
    await ledger.head();
    const codes = (await ledger.eventsAfter(0))
      .filter((event) => event.reason?.code?.startsWith('notice_'))
      .map((event) => event.reason?.code);
    expect(codes).toEqual(['notice_delivered']);

    // Another gate, after any claim would have run out, has nothing to send again.
    const second = takingChannel();
    const later = setup(await store.open(), second.channel);
    later.clock.advance(60 * SECOND);
    await later.gate.recover();
    expect(second.seen).toEqual([]);
    await later.gate.close();
  });
});
