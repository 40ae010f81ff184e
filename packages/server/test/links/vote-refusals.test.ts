import { defineTool } from '@toolgate/core';
import { expect, it } from 'vitest';
import { approvalLinks, createServerGate, inputHash, type Ledger } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const wire = defineTool({
  name: 'wire',
  inputSchema: {
    type: 'object',
    properties: { amount_cents: { type: 'integer', minimum: 1 } },
    required: ['amount_cents'],
    additionalProperties: false,
  },
  needsApproval: true,
  execute: (input) => ({ sent: input.amount_cents }),
});
const WIRE = { id: 'w1', name: 'wire', arguments: { amount_cents: 500 } };
const links = approvalLinks({ secret: 's'.repeat(32), baseUrl: 'https://app.example/api/toolgate' });

function gateOn(ledger: Ledger) {
  return createServerGate({ tools: [wire], ledger, recover: false, links });
}

describeLedgers(
  'refused votes in the audit trail',
  (target) => {
    it('writes a vote refused about no call as an event of the channel, which no session feed carries', async () => {
      const ledger = await (await target.fresh()).open();
      const gate = gateOn(ledger);
      await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      await gate.refuseVote({ channel: 'links', code: 'invalid_link', message: 'a changed link' });
      const events = await ledger.eventsAfter(0);
      expect(events.at(-1)).toMatchObject({
        callId: '',
        session: '',
        from: 'rejected',
        to: 'rejected',
        actor: 'toolgate:links',
        reason: { code: 'invalid_link', message: 'a changed link', channel: 'links' },
      });
      const seen: string[] = [];
      for await (const event of gate.events('chat_a', { principal: 'alice', after: 0 })) {
        seen.push(`${event.callId}:${event.to}`);
        if (event.to === 'awaiting_approval') break;
      }
      expect(seen).toEqual(['w1:pending', 'w1:validated', 'w1:awaiting_approval']);
      expect(await gate.calls('chat_a', 'alice')).toHaveLength(1);
      expect(await ledger.verify()).toMatchObject({ ok: true, events: events.length });
      await gate.close();
    });

    it('writes a vote refused about a call the ledger holds as a refusal of that call, naming the principal and the channel', async () => {
      const ledger = await (await target.fresh()).open();
      const gate = gateOn(ledger);
      await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      await gate.refuseVote({
        channel: 'slack',
        code: 'link_expired',
        message: 'the card had expired',
        callId: 'w1',
        principal: 'manager_1',
        user: 'U024BE7LH',
      });
      expect((await ledger.eventsAfter(0)).at(-1)).toMatchObject({
        callId: 'w1',
        session: 'chat_a',
        from: 'awaiting_approval',
        to: 'awaiting_approval',
        actor: 'manager_1',
        reason: {
          code: 'link_expired',
          message: 'the card had expired',
          channel: 'slack',
          principal: 'manager_1',
          user: 'U024BE7LH',
        },
      });
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      expect(await ledger.verify()).toMatchObject({ ok: true });
      await gate.close();
    });

    it('refuses a malformed via from a channel with a TypeError, deciding and writing nothing', async () => {
      const ledger = await (await target.fresh()).open();
      const gate = gateOn(ledger);
      const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      const before = await ledger.head();
      const hash = await inputHash(call.input);
      for (const via of [
        {},
        { channel: '' },
        { channel: 'slack', user: 7 },
        'slack',
        { channel: 'x'.repeat(201) },
      ])
        await expect(
          gate.approve('w1', { principal: 'alice', inputHash: hash, via: via as never }),
        ).rejects.toThrow(TypeError);
      await expect(gate.deny('w1', { principal: 'alice', via: { channel: '' } })).rejects.toThrow(
        /`via` must be \{ channel: string, user\?: string \}/u,
      );
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      expect(await ledger.head()).toBe(before);
      await gate.close();
    });

    it('makes a link for a principal bound to the input the call holds, and none without links', async () => {
      const ledger = await (await target.fresh()).open();
      const gate = gateOn(ledger);
      const call = await gate.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      const url = gate.linkFor(call, 'manager_1') as string;
      expect(links.verify(url.split('/').at(-1))).toMatchObject({
        ok: true,
        claims: { callId: 'w1', principal: 'manager_1', inputHash: await inputHash(call.input) },
      });
      const plain = createServerGate({ tools: [wire], ledger, recover: false });
      expect(plain.linkFor(call, 'manager_1')).toBeUndefined();
      await plain.close();
      await gate.close();
    });

    it("keeps another instance's follower going past more refused votes of no call than it reads at once", async () => {
      const store = await target.fresh();
      const here = gateOn(await store.open());
      const there = gateOn(await store.open());
      const call = await here.propose(WIRE, { session: 'chat_a', principal: 'alice' });
      const ended = here.settled('w1');
      for (let i = 0; i < 1001; i++)
        await there.refuseVote({ channel: 'links', code: 'invalid_link', message: `forged ${i}` });
      expect(
        await there.approve('w1', { principal: 'alice', inputHash: await inputHash(call.input) }),
      ).toEqual({
        ok: true,
      });
      expect(await ended).toMatchObject({ status: 'committed', output: { sent: 500 } });
      await here.close();
      await there.close();
    }, 60_000);
  },
  { shared: true },
);
