import { defineTool } from '@toolgate/core';
import { expect, it } from 'vitest';
import { createServerGate, type LedgerEvent } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const note = defineTool({ name: 'note', inputSchema: { type: 'object' }, execute: () => 'noted' });
const call = (id: string) => ({ id, name: 'note', arguments: '{}' });

/** Takes `count` events from a feed, then stops it. */
async function take(feed: AsyncIterableIterator<LedgerEvent>, count: number): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of feed) {
    seen.push(`${event.seq}:${event.callId}:${event.from}>${event.to}`);
    if (seen.length === count) break;
  }
  return seen;
}

describeLedgers('the event feed', (target) => {
  it('gives every event after `after`, then live ones, in order and once', async () => {
    const gate = createServerGate({
      tools: [note],
      ledger: await (await target.fresh()).open(),
      recover: false,
    });
    await gate.run(call('a'), { session: 's', principal: 'p' });
    const feed = gate.events('s', { principal: 'p', after: 2 });
    const seen = take(feed, 6);
    await gate.run(call('b'), { session: 's', principal: 'p' });
    expect(await seen).toEqual([
      '3:a:validated>executing',
      '4:a:executing>committed',
      '5:b:null>pending',
      '6:b:pending>validated',
      '7:b:validated>executing',
      '8:b:executing>committed',
    ]);
    await gate.close();
  });

  it('without `after`, gives only what happens from now on', async () => {
    const gate = createServerGate({
      tools: [note],
      ledger: await (await target.fresh()).open(),
      recover: false,
    });
    await gate.run(call('old'), { session: 's', principal: 'p' });
    const feed = gate.events('s', { principal: 'p' });
    const first = feed.next();
    let delivered = false;
    void first.then(() => (delivered = true));
    // Propose until the feed, which starts following once it has read where the ledger stands,
    // has delivered something: whatever it delivers is newer than the feed.
    let proposed = 0;
    for (; proposed < 50 && !delivered; proposed++)
      await gate.run(call(`new_${proposed}`), { session: 's', principal: 'p' });
    const event = (await first).value as LedgerEvent;
    expect(event.callId).toMatch(/^new_\d+$/);
    expect(proposed).toBeLessThan(50);
    await feed.return?.();
    await gate.close();
  });

  it("shows a feed opened before a session's first call nothing of another principal's calls", async () => {
    const gate = createServerGate({
      tools: [note],
      ledger: await (await target.fresh()).open(),
      recover: false,
    });
    const early = gate.events('s', { principal: 'mallory', after: 0 });
    const own = gate.events('s', { principal: 'alice', after: 0 });
    await gate.run(call('x'), { session: 's', principal: 'alice' });
    expect(await take(own, 4)).toHaveLength(4);
    const racing = Promise.race([
      early.next(),
      new Promise((resolve) => setTimeout(() => resolve('nothing'), 300)),
    ]);
    expect(await racing).toBe('nothing');
    expect(await gate.calls('s', 'mallory')).toEqual([]);
    await early.return?.();
    await gate.close();
  });

  it('ends a waiting feed at once when its consumer stops, and every feed when the gate closes', async () => {
    const gate = createServerGate({
      tools: [note],
      ledger: await (await target.fresh()).open(),
      recover: false,
    });
    const feed = gate.events('s', { principal: 'p' });
    const waiting = feed.next();
    await feed.return?.();
    expect(await waiting).toEqual({ value: undefined, done: true });
    const other = gate.events('s', { principal: 'p', after: 0 });
    const pending = other.next();
    await gate.close();
    expect(await pending).toEqual({ value: undefined, done: true });
  });
});
