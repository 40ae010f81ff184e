import { expect, it } from 'vitest';
import { describeLedgers } from '../support/ledgers.ts';
import { hashOf, ids, inboxGate } from './support.ts';

describeLedgers(
  'the approver inbox with two app servers on one ledger',
  (target) => {
    it('shows on one instance the calls another made wait, and their end, live', async () => {
      const store = await target.fresh();
      const a = inboxGate(await store.open(), { instance: 'app-a' });
      const b = inboxGate(await store.open(), { instance: 'app-b' });
      const head = await b.gate.head();
      const moves = b.gate.awaitingMoves('manager_1', { after: head });

      await a.propose('w1', 'wire', { iban: 'DE02', amount_cents: 50_000 }, 'chat_alice');
      const first = await moves.next();
      expect(first.value).toMatchObject({ record: { id: 'w1', status: 'awaiting_approval' } });
      expect(ids(await b.gate.awaiting('manager_1'))).toEqual(['w1']);

      // Decided through the other instance: it leaves the inbox there too.
      expect(
        await b.gate.approve('w1', {
          principal: 'manager_1',
          inputHash: await hashOf(await a.gate.get('w1')),
        }),
      ).toEqual({ ok: true });
      const statuses: string[] = [];
      for (;;) {
        const next = await moves.next();
        statuses.push(next.value.record.status);
        if (next.value.record.status === 'committed') break;
      }
      expect(statuses).toEqual(['executing', 'committed']);
      expect(await a.gate.awaiting('manager_1')).toEqual([]);
      await moves.return?.();
      await a.gate.close();
      await b.gate.close();
    });
  },
  { shared: true },
);
