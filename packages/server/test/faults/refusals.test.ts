// Refused decisions are audited without a copy of the call's record: fifteen refusals of a call
// whose output is 2 MB add a few kilobytes, not 30 MB, and the feed still tells each refusal.
import { defineTool } from '@toolgate/core';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createServerGate, type LedgerMove } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const big = 'x'.repeat(2 * 1024 * 1024);
const report = defineTool({
  name: 'report',
  inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  execute: () => ({ body: big }),
});

describeLedgers('refused decisions on a call with a large output', (target) => {
  it('store no copy of the record, and are still told on the feed', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = createServerGate({ tools: [report], ledger, recover: false });
    expect(
      await gate.run(
        { id: 'c1', name: 'report', arguments: { n: 1 } },
        { session: 's1', principal: 'alice' },
      ),
    ).toMatchObject({ status: 'committed' });
    // Chained and still pending events both, in one read: on PostgreSQL a move's event may wait
    // for the sequencer, which may chain it while the refusals are made.
    const size = async () => {
      const { rows } = await sql<{
        bytes: number | string | null;
      }>`select (select coalesce(sum(length(coalesce(record, ''))), 0) from toolgate_events)
          + (select coalesce(sum(length(coalesce(record, ''))), 0) from toolgate_pending) as bytes`.execute(
        ledger.db,
      );
      return Number(rows[0]?.bytes ?? 0);
    };
    const before = await size();
    const feed = gate.moves('s1', { principal: 'alice', after: await ledger.head() });
    for (let i = 0; i < 5; i += 1)
      expect(await gate.approve('c1', { principal: 'alice', inputHash: '0'.repeat(64) })).toMatchObject({
        ok: false,
        code: 'settled',
      });
    for (let i = 0; i < 10; i += 1)
      expect(await gate.cancel('c1', { principal: 'mallory' })).toMatchObject({
        ok: false,
        code: 'not_found',
      });
    expect(await size()).toBe(before);
    const refusals = (await ledger.eventsAfter(0)).filter((event) => event.from === event.to);
    expect(refusals.map((event) => event.reason?.code)).toEqual([
      ...Array(5).fill('settled'),
      ...Array(10).fill('forbidden'),
    ]);
    // The feed tells the owner's refusals, with the call as it stands.
    const told: LedgerMove[] = [];
    for await (const move of feed) {
      told.push(move);
      if (told.length === 15) break;
    }
    expect(told.map((move) => move.event.reason?.code)).toEqual([
      ...Array(5).fill('settled'),
      ...Array(10).fill('forbidden'),
    ]);
    expect(told[0]?.record).toMatchObject({ id: 'c1', status: 'committed', output: { body: big } });
    expect(await ledger.verify()).toMatchObject({ ok: true });
    await gate.close();
  });
});
