import { expect, it } from 'vitest';
import { describeLedgers } from '../support/ledgers.ts';
import { start } from '../support/processes.ts';

describeLedgers(
  'budgets across app servers in processes of their own',
  (target) => {
    it('40 transfers of 1,000 cents at once, from two app servers, against a 10,000 budget: exactly 10 run', async () => {
      const store = await target.fresh();
      // Opened first, so that the two servers find the schema made.
      await store.open();
      const where = `${target.dialect}:${store.location}`;
      const servers = [
        start('budget-server', [where, 'a', '20']),
        start('budget-server', [where, 'b', '20']),
      ];
      await Promise.all(servers.map((server) => server.line((message) => message.ready === true)));
      for (const server of servers) server.send({ op: 'go' });
      const results = await Promise.all(
        servers.map((server) => server.line((message) => 'statuses' in message)),
      );
      expect(await Promise.all(servers.map(async (server) => (await server.exited).code))).toEqual([0, 0]);

      const statuses = results.flatMap((result) => result.statuses as string[]);
      expect(statuses.filter((status) => status === 'committed')).toHaveLength(10);
      expect(
        results
          .flatMap((result) => result.reasons as (string | null)[])
          .filter((code) => code === 'budget_exceeded'),
      ).toHaveLength(30);
      expect(results.reduce((sum, result) => sum + (result.runs as number), 0)).toBe(10);

      const ledger = await store.open();
      const rows = await ledger.db.selectFrom('toolgate_calls').select(['status']).execute();
      expect(rows.filter((row) => row.status === 'committed')).toHaveLength(10);
      expect(rows.filter((row) => row.status === 'rejected')).toHaveLength(30);
      expect(await ledger.verify()).toMatchObject({ ok: true });
      // Two processes that compile their TypeScript as they load: seconds each on a busy machine.
    }, 60_000);
  },
  { shared: true },
);
