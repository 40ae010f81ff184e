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

/** What `now` holds beyond `before`, kind by kind. The runner's own timers may end meanwhile, so fewer is no sign. */
function added(before: readonly string[], now: readonly string[]): string[] {
  const left = [...before];
  return now.filter((kind) => {
    const at = left.indexOf(kind);
    if (at === -1) return true;
    left.splice(at, 1);
    return false;
  });
}

describeLedgers('close()', (target) => {
  it('leaves nothing open that would keep the process alive', async () => {
    const store = await target.fresh();
    const before = handles();
    const ledger = await store.open({ pollMs: 10 });
    const stop = ledger.onCommitted(() => undefined);
    await appendMoves(ledger, 2);
    await ledger.verify();
    // PostgreSQL's connections are open now (SQLite's poll timer comes and goes).
    if (target.dialect === 'postgres') expect(added(before, handles())).toContain('TCPSocketWrap');
    await ledger.close();
    stop();
    expect(added(before, handles())).toEqual([]);
  });
});
