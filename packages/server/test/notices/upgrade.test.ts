import { defineTool, inputHash } from '@toolgate/core';
import { createFakeClock, errorLog } from '@toolgate/test-utils';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createServerGate, type Channel, type Ledger, type Notice } from '../../src/index.ts';
import { approvalAsks } from '../../src/ledger/migrations/0007-approval-asks.ts';
import { notices } from '../../src/ledger/migrations/0009-notices.ts';
import { describeLedgers } from '../support/ledgers.ts';

const SECOND = 1000;
const WIRE = { id: 'w1', name: 'wire', arguments: { iban: 'DE02', amount_cents: 500_000 } };

function gateOf(ledger: Ledger, channel: Channel, onError?: (error: unknown) => void) {
  const clock = createFakeClock();
  const wire = defineTool({
    name: 'wire',
    inputSchema: { type: 'object' },
    approvers: () => ['manager_1'],
    approvalTtlMs: 600 * SECOND,
    execute: () => 'sent',
  });
  const gate = createServerGate({
    tools: [wire],
    ledger,
    clock,
    recover: false,
    channels: [channel],
    ...(onError === undefined ? {} : { onError }),
  });
  return { gate, clock };
}

/** Each index of the table, by the columns it orders (its key first), as the database lists them. */
async function indexesOf(ledger: Ledger, dialect: 'sqlite' | 'postgres', table: string): Promise<string[]> {
  if (dialect === 'postgres') {
    const { rows } = await sql<{
      indexdef: string;
    }>`select indexdef from pg_indexes where tablename = ${table}`.execute(ledger.db);
    return rows.map((row) => row.indexdef.replace(/^.* USING btree /, '').replaceAll(/[()]/g, '')).sort();
  }
  const { rows } = await sql<{ name: string }>`select name from pragma_index_list(${table})`.execute(
    ledger.db,
  );
  const indexes = await Promise.all(
    rows.map(async ({ name }) => {
      const columns = await sql<{ name: string | null }>`select name from pragma_index_info(${name})`.execute(
        ledger.db,
      );
      return columns.rows.map((column) => column.name).join(', ');
    }),
  );
  return indexes.sort();
}

const rowsOf = async (ledger: Ledger) => ({
  asks: await ledger.db.selectFrom('toolgate_asks').selectAll().execute(),
  notices: await ledger.db.selectFrom('toolgate_notices').selectAll().orderBy('id').execute(),
});

describeLedgers(
  'asks and notices on a ledger written before their keys changed',
  (target) => {
    it('keeps every row, delivers a notice that was failing once with its id, and empties the inbox at the decision', async () => {
      const store = await target.fresh();
      const before = await store.open();
      const log = errorLog();
      const failing = gateOf(
        before,
        { name: 'chat', deliver: () => Promise.reject(new Error('502 from the chat service')) },
        log.onError,
      );
      await failing.gate.propose(WIRE, { session: 's', principal: 'alice' });
      await failing.gate.recover();
      await failing.gate.close();
      expect(log.messages()).toEqual([expect.stringContaining('not delivered: the channel threw')]);
      const written = await rowsOf(before);
      expect(written.asks).toHaveLength(1);
      expect(written.notices).toMatchObject([{ kind: 'asked', principal: 'manager_1', attempts: 1 }]);
      // As the ledger stood before: the tables as their first migrations made them, holding the same rows.
      await sql`drop table toolgate_asks`.execute(before.db);
      await sql`drop table toolgate_notices`.execute(before.db);
      await approvalAsks.up(before.db as never);
      await notices.up(before.db as never);
      await sql`delete from toolgate_asks`.execute(before.db);
      await before.db.insertInto('toolgate_asks').values(written.asks).execute();
      await before.db.insertInto('toolgate_notices').values(written.notices).execute();
      await sql`delete from toolgate_migrations where name = '0011-notice-keys'`.execute(before.db);
      await before.close();

      const after = await store.open();
      expect(await rowsOf(after)).toEqual(written);
      // Keyed by principal then call, and by call, principal, channel then id: the reads go by the
      // keys, and only notices not delivered are indexed by when they are due.
      expect(await indexesOf(after, target.dialect, 'toolgate_asks')).toEqual(['principal, call_id']);
      expect(await indexesOf(after, target.dialect, 'toolgate_notices')).toEqual([
        'call_id, principal, channel, id',
        target.dialect === 'postgres' ? 'due_at WHERE delivered_at IS NULL' : 'due_at',
      ]);
      const seen: Notice[] = [];
      const { gate, clock } = gateOf(after, {
        name: 'chat',
        deliver: (notice) => {
          seen.push(notice);
          return Promise.resolve();
        },
      });
      expect((await gate.awaiting('manager_1')).map((call) => call.id)).toEqual(['w1']);
      clock.advance(SECOND);
      await gate.recover();
      expect(seen.map((notice) => [notice.kind, notice.id])).toEqual([['asked', written.notices[0]?.id]]);

      const call = await gate.get('w1');
      const hash = await inputHash(call?.input);
      expect(await gate.approve('w1', { principal: 'manager_1', inputHash: hash })).toEqual({ ok: true });
      await gate.settled('w1');
      await gate.recover();
      await gate.recover();
      expect(seen.map((notice) => notice.kind)).toEqual(['asked', 'decided']);
      expect(await gate.awaiting('manager_1')).toEqual([]);
      expect(await after.db.selectFrom('toolgate_asks').selectAll().execute()).toEqual([]);
      const left = await after.db
        .selectFrom('toolgate_notices')
        .select('id')
        .where('delivered_at', 'is', null)
        .execute();
      expect(left).toEqual([]);
      expect(await after.verify()).toMatchObject({ ok: true });
      await gate.close();
    });
  },
  { shared: true },
);
