// A SQLite ledger's file replaced under a running gate (a backup restored with `mv`, a file put in
// its place): the running ledger refuses to go on, and the replacement is never touched by the old
// file's write-ahead log, whoever opens it next and whenever.
import { existsSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { defineTool } from '@toolgate/core';
import { expect, it, vi } from 'vitest';
import { createServerGate, sqliteLedger, type Ledger } from '../../src/index.ts';
import { appendMoves } from '../support/events.ts';
import { describeLedgers, keep, scratchDirectory } from '../support/ledgers.ts';

let files = 0;

/** A ledger with four events, open on its file, and another file of twelve events to put in its place. */
async function running(
  options: { pollMs?: number } = {},
): Promise<{ path: string; ledger: Ledger; replacement: string; onError: ReturnType<typeof vi.fn> }> {
  files += 1;
  const path = join(scratchDirectory(), `running-${files}.db`);
  const onError = vi.fn();
  const ledger = keep(await sqliteLedger({ path, onError, pollMs: options.pollMs ?? 60_000 }));
  await appendMoves(ledger, 4);
  // The four are in the log, not yet in the file: the log is what would be replayed into another file.
  expect(existsSync(`${path}-wal`)).toBe(true);
  const replacement = join(scratchDirectory(), `replacement-${files}.db`);
  const other = await sqliteLedger({ path: replacement });
  await appendMoves(other, 12, 100);
  await other.close();
  return { path, ledger, replacement, onError };
}

/** Opens whatever is at `path` now and answers its chain and its events' call ids. */
async function opened(path: string): Promise<{ verified: unknown; calls: string[] }> {
  const ledger = await sqliteLedger({ path });
  try {
    return {
      verified: await ledger.verify(),
      calls: (await ledger.eventsAfter(0)).map((event) => event.callId),
    };
  } finally {
    await ledger.close();
  }
}

const twelve = Array.from({ length: 12 }, (_, n) => `call_${100 + n}`);
const intact = { verified: { ok: true, events: 12 }, calls: twelve };

describeLedgers(
  'a SQLite file replaced under a running ledger',
  () => {
    it('refuses the next move, and the replacement keeps its own chain when opened while the old ledger is still open, and after', async () => {
      const { path, ledger, replacement } = await running();
      renameSync(replacement, path);
      await expect(appendMoves(ledger, 1, 50)).rejects.toMatchObject({
        code: 'ledger_unavailable',
        message: expect.stringContaining(
          'the SQLite database file was moved or removed while the ledger had it open',
        ),
      });
      // Reads are refused too: the file they would read is no longer the ledger's.
      await expect(ledger.eventsAfter(0)).rejects.toMatchObject({ code: 'ledger_unavailable' });
      expect(await opened(path)).toMatchObject(intact);
      await ledger.close();
      expect(await opened(path)).toMatchObject(intact);
    });

    it('leaves the replacement whole when the old ledger closes without another move', async () => {
      const { path, ledger, replacement } = await running();
      renameSync(replacement, path);
      await ledger.close();
      expect(await opened(path)).toMatchObject(intact);
    });

    it('notices the replacement between moves, tells onError, and moves its log aside before anything else opens the path', async () => {
      const { path, ledger, replacement, onError } = await running({ pollMs: 20 });
      renameSync(replacement, path);
      await vi.waitFor(() =>
        expect(onError).toHaveBeenCalledWith(expect.objectContaining({ code: 'ledger_unavailable' })),
      );
      expect(await opened(path)).toMatchObject(intact);
      await ledger.close();
    });

    it('keeps the old file’s last commits in the log it moved aside, which opens whole beside the old file', async () => {
      const { path, ledger, replacement } = await running();
      const old = join(scratchDirectory(), `old-${files}.db`);
      renameSync(path, old);
      renameSync(replacement, path);
      await expect(appendMoves(ledger, 1, 50)).rejects.toMatchObject({ code: 'ledger_unavailable' });
      await ledger.close();
      const [aside] = readdirSync(scratchDirectory()).filter((name) =>
        name.startsWith(`running-${files}.db-wal.moved-`),
      );
      expect(aside).toBeDefined();
      renameSync(join(scratchDirectory(), aside as string), `${old}-wal`);
      expect(await opened(old)).toMatchObject({ verified: { ok: true, events: 4 } });
      expect(await opened(path)).toMatchObject(intact);
    });

    it('makes the gate fail closed: a proposal answers ledger_unavailable and nothing runs', async () => {
      const { path, ledger, replacement } = await running();
      let runs = 0;
      const tool = defineTool({
        name: 'charge',
        inputSchema: { type: 'object' },
        execute: () => (runs += 1),
      });
      const gate = createServerGate({ tools: [tool], ledger, recover: false, onError: () => undefined });
      renameSync(replacement, path);
      await expect(
        gate.propose({ id: 'c1', name: 'charge', arguments: {} }, { session: 's1', principal: 'alice' }),
      ).rejects.toMatchObject({ code: 'ledger_unavailable' });
      expect(runs).toBe(0);
      await gate.close();
      await ledger.close();
      expect(await opened(path)).toMatchObject(intact);
    });
  },
  { shared: true, dialects: ['sqlite'] },
);
