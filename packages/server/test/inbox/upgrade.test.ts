import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { describeLedgers } from '../support/ledgers.ts';
import { hashOf, ids, inboxGate } from './support.ts';

describeLedgers(
  'the approver inbox on a ledger written before it',
  (target) => {
    it('indexes the calls already waiting when the ledger is upgraded, without the approvers who approved', async () => {
      const store = await target.fresh();
      const before = await store.open();
      const { gate, propose } = inboxGate(before);
      const quorum = await propose('q1', 'big_wire', { iban: 'DE02', amount_cents: 2_000_000 }, 'chat_alice');
      await propose('r1', 'refund', { order: 'o_7' }, 'chat_bob', 'bob');
      await propose('w1', 'wire', { iban: 'DE02', amount_cents: 500 }, 'chat_alice');
      expect(await gate.deny('w1', { principal: 'manager_1' })).toEqual({ ok: true });
      await gate.approve('q1', { principal: 'manager_1', inputHash: await hashOf(quorum) });
      await gate.close();
      // As the ledger stood before the inbox: no index, and its migration not applied.
      await sql`drop table toolgate_asks`.execute(before.db);
      await sql`delete from toolgate_migrations where name = '0007-approval-asks'`.execute(before.db);
      await before.close();

      const after = await store.open();
      const upgraded = inboxGate(after).gate;
      expect(ids(await upgraded.awaiting('finance_1'))).toEqual(['q1']);
      expect(ids(await upgraded.awaiting('support_1'))).toEqual(['r1']);
      expect(await upgraded.awaiting('manager_1')).toEqual([]);
      await upgraded.close();
    });
  },
  { shared: true },
);
