import { expect, it } from 'vitest';
import { move } from './support/events.ts';
import { describeLedgers } from './support/ledgers.ts';

// PostgreSQL: a move that finds the chain held does not wait for it; its event waits instead,
// durable with the move, until the sequencer chains it.
describeLedgers(
  'events left pending',
  (target) => {
    it('lets a move commit while another transaction holds the chain, and chains its event once the chain is free', async () => {
      const store = await target.fresh();
      const ledger = await store.open();
      const other = await store.open();
      await ledger.transaction((trx) => ledger.appendEvent(trx, move(1)));
      const held = await other.begin();
      await other.appendEvent(held.trx, move(2));
      const moved = ledger.transaction(async (trx) => {
        await trx
          .insertInto('toolgate_sessions')
          .values({ id: 'moved', owner: 'user_1', created_at: 0 })
          .execute();
        await ledger.recordEvents(trx, [move(3)]);
      });
      // The move is committed (another connection sees it) while the chain is still held.
      await expect
        .poll(
          async () =>
            (await other.db.selectFrom('toolgate_sessions').select('id').execute()).map((row) => row.id),
          { timeout: 10_000 },
        )
        .toEqual(['moved']);
      expect(await other.db.selectFrom('toolgate_pending').select('call_id').execute()).toEqual([
        { call_id: 'call_3' },
      ]);
      await held.commit();
      await moved;
      expect((await ledger.eventsAfter(0)).map((event) => [event.seq, event.callId])).toEqual([
        [1, 'call_1'],
        [2, 'call_2'],
        [3, 'call_3'],
      ]);
      expect(await ledger.db.selectFrom('toolgate_pending').select('id').execute()).toEqual([]);
      expect(await other.verify()).toMatchObject({ ok: true, events: 3 });
    });

    it('chains, before it reads, what a process that died left pending', async () => {
      const store = await target.fresh();
      const ledger = await store.open();
      await ledger.transaction((trx) => ledger.appendEvent(trx, move(1)));
      // As a process killed between its move's commit and its sequencer's pass leaves it.
      await ledger.db
        .insertInto('toolgate_pending')
        .values({
          call_id: 'call_2',
          session: 's1',
          from_status: null,
          to_status: 'pending',
          actor: 'user_1',
          at: 2,
          reason: null,
          record: null,
        })
        .execute();
      const reader = await store.open();
      expect((await reader.eventsAfter(0)).map((event) => [event.seq, event.callId])).toEqual([
        [1, 'call_1'],
        [2, 'call_2'],
      ]);
      expect(await reader.head()).toBe(2);
      expect(await reader.verify()).toMatchObject({ ok: true, events: 2 });
    });

    it('chains a call’s moves in order when the first was left pending', async () => {
      const store = await target.fresh();
      const ledger = await store.open();
      const other = await store.open();
      await ledger.transaction((trx) => ledger.appendEvent(trx, move(1)));
      const held = await other.begin();
      await other.appendEvent(held.trx, move(2));
      const first = ledger.transaction((trx) =>
        ledger.recordEvents(trx, [move(3, { callId: 'call_x', to: 'executing', from: 'pending' })]),
      );
      await expect
        .poll(
          async () => (await other.db.selectFrom('toolgate_pending').select('call_id').execute()).length,
          { timeout: 10_000 },
        )
        .toBe(1);
      await held.commit();
      await first;
      await ledger.transaction((trx) =>
        ledger.recordEvents(trx, [move(4, { callId: 'call_x', from: 'executing', to: 'committed' })]),
      );
      const events = (await ledger.eventsAfter(0)).filter((event) => event.callId === 'call_x');
      expect(events.map((event) => event.to)).toEqual(['executing', 'committed']);
      expect(events[0]!.seq).toBeLessThan(events[1]!.seq);
    });
  },
  { dialects: ['postgres'] },
);

describeLedgers(
  'events of a move on SQLite',
  (target) => {
    it('are chained in the move’s own transaction, as SQLite writes one transaction at a time', async () => {
      const ledger = await (await target.fresh()).open();
      const inside = await ledger.transaction(async (trx) => {
        await ledger.recordEvents(trx, [move(1)]);
        return trx.selectFrom('toolgate_events').select(['seq', 'call_id']).execute();
      });
      expect(inside).toEqual([{ seq: 1, call_id: 'call_1' }]);
      expect(await ledger.db.selectFrom('toolgate_pending').select('id').execute()).toEqual([]);
    });
  },
  { dialects: ['sqlite'] },
);

describeLedgers(
  'the first move of a ledger object just opened',
  (target) => {
    it('is chained in its own transaction, after the head another ledger object left', async () => {
      const store = await target.fresh();
      const first = await store.open();
      await first.transaction((trx) => first.appendEvent(trx, move(1)));
      // On PostgreSQL a move does not wait for the chain: without a head to chain after, it would
      // leave its event pending for the sequencer, to be chained only after it commits.
      const opened = await store.open();
      const inside = await opened.transaction(async (trx) => {
        await opened.recordEvents(trx, [move(2)]);
        return trx.selectFrom('toolgate_events').select(['seq', 'call_id']).orderBy('seq').execute();
      });
      expect(inside).toEqual([
        { seq: 1, call_id: 'call_1' },
        { seq: 2, call_id: 'call_2' },
      ]);
      expect(await opened.db.selectFrom('toolgate_pending').select('id').execute()).toEqual([]);
      expect(await opened.verify()).toMatchObject({ ok: true, events: 2 });
    });
  },
  { shared: true },
);
