// PostgreSQL: a move whose transaction ends with its row's write sends the transaction's COMMIT
// with that statement (one write to the socket, one round trip). What it wrote is committed once
// the statement answers; nothing else may run in that transaction after it.
import { expect, it } from 'vitest';
import { statement, type RowWrite } from '../../src/ledger/statements.ts';
import { move } from '../support/events.ts';
import { describeLedgers } from '../support/ledgers.ts';

const INSERT_SESSION = statement(
  'insert into "toolgate_sessions" ("id", "owner", "created_at") values (?, ?, ?)',
);
const session = (id: string, owner: string | null = 'user_1'): RowWrite => ({
  statement: INSERT_SESSION,
  values: [id, owner, 0],
  last: true,
});

describeLedgers(
  'a transaction that ends with a row write',
  (target) => {
    it('is committed by that statement: what it wrote is seen elsewhere before the transaction returns', async () => {
      const ledger = await (await target.fresh()).open();
      const seenInside = await ledger.transaction(async (trx) => {
        expect(await ledger.recordWith(trx, session('s_1'), [move(1)])).toBe(1);
        return ledger.db.selectFrom('toolgate_sessions').select('id').execute();
      });
      expect(seenInside).toEqual([{ id: 's_1' }]);
      expect((await ledger.eventsAfter(0)).map((event) => [event.seq, event.callId])).toEqual([
        [1, 'call_1'],
      ]);
      expect(await ledger.verify()).toMatchObject({ ok: true, events: 1 });
    });

    it('refuses a statement after it, and keeps what it committed', async () => {
      const ledger = await (await target.fresh()).open();
      const after = ledger.transaction(async (trx) => {
        await ledger.recordWith(trx, session('s_1'), [move(1)]);
        await trx
          .insertInto('toolgate_sessions')
          .values({ id: 's_2', owner: 'user_1', created_at: 0 })
          .execute();
      });
      await expect(after).rejects.toThrow(/nothing more runs in it/);
      expect(await ledger.db.selectFrom('toolgate_sessions').select('id').execute()).toEqual([{ id: 's_1' }]);
      expect(await ledger.verify()).toMatchObject({ ok: true, events: 1 });
    });

    it('commits nothing when the statement fails, the earlier statements of its transaction included', async () => {
      const ledger = await (await target.fresh()).open();
      const failed = ledger.transaction(async (trx) => {
        await trx
          .insertInto('toolgate_sessions')
          .values({ id: 's_0', owner: 'user_1', created_at: 0 })
          .execute();
        await ledger.recordWith(trx, session('s_1', null), [move(1)]); // owner is NOT NULL
      });
      await expect(failed).rejects.toThrow(/null value/);
      expect(await ledger.db.selectFrom('toolgate_sessions').select('id').execute()).toEqual([]);
      expect(await ledger.eventsAfter(0)).toEqual([]);
      // The connection went back to the pool out of its failed transaction: the next one works.
      await ledger.transaction((trx) => ledger.recordWith(trx, session('s_2'), [move(2)]));
      expect(await ledger.db.selectFrom('toolgate_sessions').select('id').execute()).toEqual([{ id: 's_2' }]);
      expect(await ledger.verify()).toMatchObject({ ok: true, events: 1 });
    });
  },
  { dialects: ['postgres'] },
);
