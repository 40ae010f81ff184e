import { expect, it } from 'vitest';
import { appendMoves } from './support/events.ts';
import { describeLedgers } from './support/ledgers.ts';
import { start } from './support/processes.ts';

describeLedgers(
  'app servers in processes of their own',
  (target) => {
    it('open a new store at the same time, append at the same time, and leave one gapless chain', async () => {
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      const servers = [start('append', [where, 'a', '25']), start('append', [where, 'b', '25'])];
      const results = await Promise.all(servers.map((server) => server.line((message) => 'seqs' in message)));
      expect(await Promise.all(servers.map(async (server) => (await server.exited).code))).toEqual([0, 0]);
      const ledger = await store.open();
      const events = await ledger.eventsAfter(0);
      expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 50 }, (_, index) => index + 1));
      expect(results.flatMap((result) => result.seqs as number[]).sort((x, y) => x - y)).toEqual(
        events.map((event) => event.seq),
      );
      for (const prefix of ['a', 'b']) {
        expect(
          events.filter((event) => event.callId.startsWith(`${prefix}_`)).map((event) => event.callId),
        ).toEqual(Array.from({ length: 25 }, (_, index) => `${prefix}_${index + 1}`));
      }
      expect(await ledger.verify()).toMatchObject({ ok: true, events: 50 });
    });

    it('a process killed in the middle of a transaction leaves nothing of it behind', async () => {
      const store = await target.fresh();
      const server = start('hold', [`${target.dialect}:${store.location}`]);
      await server.line((message) => message.holding === true);
      server.kill('SIGKILL');
      expect(await server.exited).toMatchObject({ signal: 'SIGKILL' });
      const ledger = await store.open();
      expect(await ledger.eventsAfter(0)).toEqual([]);
      expect(await ledger.db.selectFrom('toolgate_calls').selectAll().execute()).toEqual([]);
      expect(await appendMoves(ledger, 1)).toMatchObject([{ seq: 1, callId: 'call_1' }]);
      expect(await ledger.verify()).toMatchObject({ ok: true, events: 1 });
    });
  },
  { shared: true },
);
