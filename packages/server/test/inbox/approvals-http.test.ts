import { expect, it } from 'vitest';
import { toolgateHandler, type Ledger } from '../../src/index.ts';
import { as, bearer, openFeed, post, serve } from '../support/http.ts';
import { describeLedgers } from '../support/ledgers.ts';
import { hashOf, ids, inboxGate } from './support.ts';

const SMALL = { iban: 'DE02', amount_cents: 50_000 };

async function served(ledger: Ledger) {
  const { gate, clock, propose } = inboxGate(ledger);
  const server = await serve(toolgateHandler(gate, { authenticate: bearer, basePath: '/api' }));
  const close = async () => {
    await server.close();
    await gate.close();
  };
  return { gate, clock, propose, base: `${server.origin}/api`, close };
}

async function get(url: string, principal?: string) {
  const response = await fetch(url, { headers: as(principal) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describeLedgers(
  'the approver inbox over HTTP',
  (target) => {
    it('GET /approvals answers the calls waiting for the signed-in principal, and nothing to anyone else', async () => {
      const ledger = await (await target.fresh()).open();
      const { propose, clock, base, close } = await served(ledger);
      await propose('w_bob', 'wire', SMALL, 'chat_bob', 'bob');
      clock.advance(1_000);
      await propose('w_alice', 'wire', SMALL, 'chat_alice');

      const mine = await get(`${base}/approvals`, 'manager_1');
      expect(mine.status).toBe(200);
      expect(mine.body['seq']).toBe(await ledger.head());
      expect(ids(mine.body['calls'] as never)).toEqual(['w_bob', 'w_alice']);
      expect(await get(`${base}/approvals`, 'mallory')).toMatchObject({ status: 200, body: { calls: [] } });
      expect(await get(`${base}/approvals`)).toMatchObject({
        status: 401,
        body: { error: { code: 'unauthenticated' } },
      });
      const posted = await fetch(`${base}/approvals`, { method: 'POST', headers: as('manager_1') });
      expect(posted.status).toBe(405);
      await close();
    });

    it('lets the asked principal approve over HTTP, and answers 404 to one who was not asked', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, propose, base, close } = await served(ledger);
      const call = await propose('w1', 'wire', SMALL, 'chat_alice');
      const inputHash = await hashOf(call);
      expect(await post(`${base}/calls/w1/approve`, 'mallory', { inputHash })).toMatchObject({
        status: 404,
        body: { error: { code: 'not_found' } },
      });
      expect(await post(`${base}/calls/w1/deny`, 'mallory', {})).toMatchObject({ status: 404 });
      expect((await gate.get('w1'))?.status).toBe('awaiting_approval');
      expect(await post(`${base}/calls/w1/approve`, 'manager_1', { inputHash })).toMatchObject({
        status: 200,
        body: { ok: true },
      });
      expect(await gate.settled('w1')).toMatchObject({ status: 'committed' });
      expect(await get(`${base}/approvals`, 'manager_1')).toMatchObject({ body: { calls: [] } });
      await close();
    });

    it('GET /approvals/events sends the inbox, then each call coming in or going out, and resumes after Last-Event-ID', async () => {
      const ledger = await (await target.fresh()).open();
      const { gate, propose, base, close } = await served(ledger);
      const first = await propose('q1', 'big_wire', { iban: 'DE02', amount_cents: 2_000_000 }, 'chat_alice');
      const feed = await openFeed(`${base}/approvals/events`, { principal: 'manager_1' });
      expect(feed.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      await feed.until(() => feed.messages.length >= 1);
      const seq = await ledger.head();
      expect(feed.messages[0]).toMatchObject({
        id: String(seq),
        event: 'snapshot',
        data: { seq, principal: 'manager_1', calls: [{ id: 'q1', status: 'awaiting_approval' }] },
      });

      // A call that does not ask manager_1 never shows; one in another session does.
      await propose('r1', 'refund', { order: 'o_7' }, 'chat_alice');
      await propose('w2', 'wire', SMALL, 'chat_bob', 'bob');
      await feed.until(() => feed.moves().some((move) => move.record.id === 'w2'));
      // manager_1 approves q1 (one of two): it leaves their inbox while it still waits for finance.
      expect(await gate.approve('q1', { principal: 'manager_1', inputHash: await hashOf(first) })).toEqual({
        ok: true,
        left: 1,
      });
      expect(await gate.deny('w2', { principal: 'manager_1' })).toEqual({ ok: true });
      await feed.until(() => feed.moves().some((move) => move.record.status === 'cancelled'));
      const seen = feed.moves().map((move) => `${move.record.id}:${move.record.status}`);
      expect(seen).toEqual([
        'w2:awaiting_approval',
        'q1:awaiting_approval', // approved by manager_1, one left
        'w2:cancelled',
      ]);
      expect(feed.moves()[1]?.record.approval).toMatchObject({
        left: 1,
        approvedBy: [{ principal: 'manager_1' }],
      });
      feed.close();

      // finance_1 resumes where an earlier page left off: no snapshot, every move of theirs after it.
      const resumed = await openFeed(`${base}/approvals/events`, {
        principal: 'finance_1',
        lastEventId: seq,
      });
      await resumed.until(() => resumed.moves().length >= 1);
      expect(resumed.messages.some((message) => message.event === 'snapshot')).toBe(false);
      expect(resumed.moves().map((move) => [move.event.seq > seq, move.record.id])).toEqual([[true, 'q1']]);
      expect(
        await gate.approve('q1', { principal: 'finance_1', inputHash: await hashOf(first) }),
      ).toMatchObject({ ok: true });
      await resumed.until(() => resumed.moves().some((move) => move.record.status === 'committed'));
      expect(resumed.moves().map((move) => move.event.reason?.code ?? move.record.status)).toEqual([
        'approved', // manager_1's, before this page opened
        'approved', // finance_1's, the last one needed
        'executing',
        'committed',
      ]);
      resumed.close();
      await close();
    });

    it('refuses a Last-Event-ID beyond the last event written', async () => {
      const ledger = await (await target.fresh()).open();
      const { base, close } = await served(ledger);
      const response = await fetch(`${base}/approvals/events`, {
        headers: as('manager_1', { 'last-event-id': '99' }),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 'malformed' } });
      await close();
    });
  },
  { shared: true },
);
