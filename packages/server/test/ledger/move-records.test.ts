// A move writes a call's row and its event together (on PostgreSQL in one statement, the record
// sent once): each event still holds the record its move wrote, chained by its hash, so the trail
// proves what each call held at each move, and an edit of either copy is named by verify().
import { defineTool } from '@toolgate/core';
import { expect, it } from 'vitest';
import { createServerGate, type Ledger } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const transfer = defineTool({
  name: 'transfer',
  inputSchema: {
    type: 'object',
    properties: { to: { type: 'string' }, cents: { type: 'integer' } },
    required: ['to', 'cents'],
  },
  execute: (input) => ({ sent: input.cents }),
});
const session = { session: 's1', principal: 'alice' };

async function committedCall(ledger: Ledger) {
  const gate = createServerGate({ tools: [transfer], ledger, recover: false });
  const call = await gate.run({ id: 'c1', name: 'transfer', arguments: { to: 'bob', cents: 500 } }, session);
  expect(call.status).toBe('committed');
  await gate.close();
  // A move's event may still be pending (chained right after its commit, on PostgreSQL): head() chains it.
  await ledger.head();
  const events = await ledger.db
    .selectFrom('toolgate_events')
    .select(['seq', 'to_status', 'record'])
    .where('call_id', '=', 'c1')
    .orderBy('seq')
    .execute();
  const row = await ledger.db
    .selectFrom('toolgate_calls')
    .select('record')
    .where('id', '=', 'c1')
    .executeTakeFirstOrThrow();
  return { events, row };
}

describeLedgers('the record each move writes', (target) => {
  it('is held by the move’s event as the row was written, at every move', async () => {
    const ledger = await (await target.fresh()).open();
    const { events, row } = await committedCall(ledger);
    expect(events.map((event) => event.to_status)).toEqual([
      'pending',
      'validated',
      'executing',
      'committed',
    ]);
    for (const event of events) {
      const record = JSON.parse(event.record ?? 'null') as { status: string; output?: unknown };
      expect(record.status).toBe(event.to_status);
    }
    expect(JSON.parse(events[2]?.record ?? 'null')).toMatchObject({ input: { to: 'bob', cents: 500 } });
    expect(events[3]?.record).toBe(row.record);
    expect(JSON.parse(row.record)).toMatchObject({ output: { sent: 500 } });
    expect(await ledger.verify()).toMatchObject({ ok: true, events: 4 });
  });

  it('is named by verify() when an event’s copy was edited', async () => {
    const ledger = await (await target.fresh()).open();
    const { events } = await committedCall(ledger);
    const executing = events[2] as { seq: number; record: string };
    const edited = JSON.stringify({
      ...(JSON.parse(executing.record) as object),
      input: { to: 'mallory', cents: 500 },
    });
    await ledger.db
      .updateTable('toolgate_events')
      .set({ record: edited })
      .where('seq', '=', executing.seq)
      .execute();
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: executing.seq,
      why: `event ${executing.seq} was changed: its fields no longer match its hash`,
    });
  });

  it('is named by verify() when the row’s copy was edited', async () => {
    const ledger = await (await target.fresh()).open();
    const { row } = await committedCall(ledger);
    const edited = JSON.stringify({ ...(JSON.parse(row.record) as object), output: { sent: 500_000 } });
    await ledger.db.updateTable('toolgate_calls').set({ record: edited }).where('id', '=', 'c1').execute();
    expect(await ledger.verify()).toMatchObject({
      ok: false,
      why: expect.stringContaining('call "c1" was changed in toolgate_calls'),
    });
  });
});
