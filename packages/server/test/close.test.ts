import { expect, it } from 'vitest';
import { appendMoves } from './support/events.ts';
import { describeLedgers } from './support/ledgers.ts';

// What keeps a Node process alive: sockets, timers, file watchers... (not requests under way,
// such as the test runner's own file writes).
const handles = () =>
  process
    .getActiveResourcesInfo()
    .filter((kind) => !kind.endsWith('Req') && !kind.startsWith('FSReq'))
    .sort();

describeLedgers('close()', (target) => {
  it('leaves nothing open that would keep the process alive', async () => {
    const store = await target.fresh();
    const before = handles();
    const ledger = await store.open({ pollMs: 10 });
    const stop = ledger.onCommitted(() => undefined);
    await appendMoves(ledger, 2);
    await ledger.verify();
    expect(handles().length).toBeGreaterThanOrEqual(before.length);
    await ledger.close();
    stop();
    expect(handles()).toEqual(before);
  });
});
