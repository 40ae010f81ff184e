// A commit that chains an event holding no record (a refusal, a notice's delivery) beside its moves
// reaches the live tail as every event it chained: the tail sends each such event with the call's
// record as the tail last sent it, as a read of the ledger would, and reads nothing.
import { expect, it } from 'vitest';
import { createTail } from '../../src/feed/feed.ts';
import type { Ledger, LedgerMove, NewLedgerEvent } from '../../src/index.ts';
import { callRow, move } from '../support/events.ts';
import { describeLedgers } from '../support/ledgers.ts';

const record = (id: string, status: string) =>
  JSON.stringify({ id, name: 'charge', status, input: { amount_cents: 9000 }, history: [] });

/** A note about call `id`: a delivery that leaves it as it is. */
const note = (id: string, n: number): NewLedgerEvent =>
  move(n, {
    callId: id,
    from: 'awaiting_approval',
    to: 'awaiting_approval',
    actor: 'toolgate:webhook',
    reason: { code: 'notice_delivered', message: `notice ${n} delivered` },
  });

/** The ledger, with every read of moves counted. */
function counted(ledger: Ledger): { ledger: Ledger; reads: () => number } {
  let reads = 0;
  const movesAfter: Ledger['movesAfter'] = (after, options) => (
    (reads += 1),
    ledger.movesAfter(after, options)
  );
  return { ledger: { ...ledger, movesAfter }, reads: () => reads };
}

/** Writes call `id`, waiting for approval, and its move, in one commit. */
async function askedCall(ledger: Ledger, id: string, n: number): Promise<void> {
  const asked = record(id, 'awaiting_approval');
  await ledger.transaction(async (trx) => {
    await trx
      .insertInto('toolgate_calls')
      .values(callRow(id, { record: asked }))
      .execute();
    await ledger.recordEvents(trx, [move(n, { callId: id, to: 'awaiting_approval', record: asked })]);
  });
}

/** A tail over `ledger` with one listener, which collects what it is sent. */
function follow(ledger: Ledger) {
  const tail = createTail(ledger, (error) => {
    throw error;
  });
  const seen: LedgerMove[] = [];
  const following = tail.subscribe((moves) => seen.push(...moves));
  return { seen, from: following.from, stop: () => (following.stop(), tail.close()) };
}

describeLedgers('the live tail and events that hold no record', (target) => {
  it('sends a note with its call as the tail last sent it, without reading the ledger', async () => {
    const opened = await (await target.fresh()).open();
    const { ledger, reads } = counted(opened);
    const { seen, from, stop } = follow(ledger);
    expect(await from).toBe(0);
    await askedCall(ledger, 'c1', 1);
    await expect.poll(() => seen.length).toBe(1);
    const readsBefore = reads();
    // A note first, then another call's move, then a note about that call: one commit, chained by
    // two statements (on PostgreSQL each notifies its own last seq).
    const other = record('c2', 'awaiting_approval');
    await ledger.transaction(async (trx) => {
      await trx
        .insertInto('toolgate_calls')
        .values(callRow('c2', { record: other }))
        .execute();
      await ledger.recordEvents(trx, [
        note('c1', 2),
        move(3, { callId: 'c2', to: 'awaiting_approval', record: other }),
      ]);
      await ledger.recordEvents(trx, [note('c2', 4)]);
    });
    await expect.poll(() => seen.length).toBe(4);
    expect(reads()).toBe(readsBefore);
    stop();
    const sent = seen.map(({ event, record: call }) => [
      event.seq,
      event.callId,
      event.reason?.code,
      call.status,
    ]);
    expect(sent).toEqual([
      [1, 'c1', undefined, 'awaiting_approval'],
      [2, 'c1', 'notice_delivered', 'awaiting_approval'],
      [3, 'c2', undefined, 'awaiting_approval'],
      [4, 'c2', 'notice_delivered', 'awaiting_approval'],
    ]);
    // What a reader that reads the ledger is given for the same events.
    const read = await opened.movesAfter(0);
    expect(
      read.map(({ event, record: call }) => [event.seq, event.callId, event.reason?.code, call.status]),
    ).toEqual(sent);
    expect(seen.map(({ record: call }) => call.id)).toEqual(read.map(({ record: call }) => call.id));
  });

  it('reads the ledger for a note about a call it has not sent', async () => {
    const opened = await (await target.fresh()).open();
    await askedCall(opened, 'c1', 1);
    const { ledger, reads } = counted(opened);
    const { seen, from, stop } = follow(ledger);
    expect(await from).toBe(1);
    await expect.poll(() => reads()).toBeGreaterThan(0);
    const readsBefore = reads();
    await ledger.transaction((trx) => ledger.recordEvents(trx, [note('c1', 2)]));
    await expect.poll(() => seen.length).toBe(1);
    expect(reads()).toBeGreaterThan(readsBefore);
    expect(seen.map(({ event, record: call }) => [event.seq, call.id])).toEqual([[2, 'c1']]);
    stop();
  });
});
