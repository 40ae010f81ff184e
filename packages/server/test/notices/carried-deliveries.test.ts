import { defineTool } from '@toolgate/core';
import { createFakeClock } from '@toolgate/test-utils';
import { expect, it, vi } from 'vitest';
import { createServerGate, type Channel, type Notice } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const args = { iban: 'DE02', amount_cents: 500_000 };

describeLedgers('an ask written by a move that records an earlier delivery', (target) => {
  it('is delivered as soon as its move commits, as the earlier ask was', async () => {
    const ledger = await (await target.fresh()).open();
    const seen: Notice[] = [];
    const channel: Channel = {
      name: 'chat',
      deliver(notice) {
        seen.push(notice);
        return Promise.resolve({ ref: `msg-${seen.length}` });
      },
    };
    const clock = createFakeClock();
    const wire = defineTool({
      name: 'wire',
      inputSchema: { type: 'object' },
      approvers: () => ['manager_1'],
      approvalTtlMs: 600_000,
      execute: () => 'sent',
    });
    const gate = createServerGate({ tools: [wire], ledger, clock, recover: false, channels: [channel] });
    const delivered = () => seen.map((notice) => notice.call.id);
    // Runs what is due now on the gate's clock until `count` calls were told, for at most two seconds:
    // a notice that waits for its claim to run out (30 s on that clock) is not due in that time.
    const until = async (count: number) => {
      const started = Date.now();
      while (delivered().length < count && Date.now() - started < 2000) {
        clock.advance(0);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await gate.propose({ id: 'w1', name: 'wire', arguments: args }, { session: 's', principal: 'alice' });
      await until(1);
      expect(delivered()).toEqual(['w1']);
      // w1's delivery is not recorded yet: w2's first move records it, and writes w2's ask.
      await gate.propose({ id: 'w2', name: 'wire', arguments: args }, { session: 's', principal: 'alice' });
      await until(2);
      expect(delivered()).toEqual(['w1', 'w2']);
    } finally {
      vi.useRealTimers();
      await gate.close();
    }
  });
});
