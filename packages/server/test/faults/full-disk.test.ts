// The SQLite file on a small tmpfs that fills up while calls run: the ledger answers LedgerError
// (HTTP 503), never the driver's own error, and a result that could not be written is written
// once there is room again.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@toolgate/core';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { createServerGate, LedgerError, sqliteLedger, toolgateHandler } from '../../src/index.ts';
import { as, bearer, serve } from '../support/http.ts';

/** A 4 MB tmpfs of its own, if this process may mount one (root, as on CI). */
function smallDisk(): { readonly path: string; readonly unmount: () => void } | { readonly missing: string } {
  const path = mkdtempSync(join(tmpdir(), 'toolgate-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', path], { stdio: 'pipe' });
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    return { missing: `cannot mount a small tmpfs here (${(error as Error).message.split('\n')[0] ?? ''})` };
  }
  return {
    path,
    unmount: () => {
      execFileSync('umount', ['-l', path]);
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** Fills the disk holding `directory` with one file, until the disk refuses more; returns its path. */
function fill(directory: string): string {
  const file = join(directory, 'filler');
  const fd = openSync(file, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error;
    // The last bytes: whatever block size is left.
    for (let size = 32 * 1024; size >= 1; size = Math.floor(size / 2)) {
      try {
        for (;;) writeSync(fd, block.subarray(0, size));
      } catch {
        // next smaller size
      }
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

const disk = smallDisk();
afterAll(() => {
  if ('unmount' in disk) disk.unmount();
});
const missing = 'missing' in disk ? disk.missing : undefined;
if (missing !== undefined && process.env.CI !== 'true')
  console.warn(`\n!!! SKIPPING the full-disk tests: ${missing}\n`);

const session = { session: 's1', principal: 'alice' };

// Without a small disk, outside CI, the suite is not declared: the warning above says it did not run.
const describeOnSmallDisk = missing !== undefined && process.env.CI !== 'true' ? () => undefined : describe;

describeOnSmallDisk('a SQLite ledger whose disk fills up (SQLite file on a 4 MB tmpfs)', () => {
  it('answers LedgerError and 503 while the disk is full, and writes the result that arrived meanwhile once there is room', async () => {
    if (!('path' in disk)) throw new Error(`the full-disk tests need a small tmpfs: ${missing ?? ''}`);
    const directory = join(disk.path, 'one');
    mkdirSync(directory);
    const ledger = await sqliteLedger({ path: join(directory, 'toolgate.db'), onError: () => undefined });
    onTestFinished(() => ledger.close());
    let filler: string | undefined;
    let runs = 0;
    const big = 'x'.repeat(300 * 1024);
    const report = defineTool({
      name: 'report',
      inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      needsApproval: (input) => input.n > 100,
      execute: () => {
        runs += 1;
        if (runs === 1) filler = fill(disk.path); // the disk fills up as the first run returns a large result
        return { body: big };
      },
    });
    const gate = createServerGate({
      tools: [report],
      ledger,
      leaseMs: 3000,
      endingRetryMs: 20_000,
      onError: () => undefined,
    });
    onTestFinished(() => gate.close());
    const served = await serve(toolgateHandler(gate, { authenticate: bearer, onError: () => undefined }));
    onTestFinished(() => served.close());

    expect(
      await gate.propose({ id: 'waiting', name: 'report', arguments: { n: 500 } }, session),
    ).toMatchObject({ status: 'awaiting_approval' });
    expect(await gate.propose({ id: 'c1', name: 'report', arguments: { n: 1 } }, session)).toMatchObject({
      status: 'executing',
    });
    await expect.poll(() => filler).toBeDefined();

    // While the disk is full: the ledger's own error, as a program and over HTTP.
    const failing = gate.propose({ id: 'c2', name: 'report', arguments: { n: 2 } }, session);
    await expect(failing).rejects.toBeInstanceOf(LedgerError);
    await expect(failing).rejects.toMatchObject({
      code: 'ledger_unavailable',
      message: expect.stringContaining('full'),
    });
    const denied = await fetch(`${served.origin}/api/toolgate/calls/waiting/deny`, {
      method: 'POST',
      headers: as('alice', { 'content-type': 'application/json' }),
      body: '{}',
    });
    expect(denied.status).toBe(503);
    expect(await denied.json()).toMatchObject({ error: { code: 'unavailable' } });

    rmSync(filler as string);
    expect(await gate.settled('c1')).toMatchObject({ status: 'committed', output: { body: big } });
    expect(runs).toBe(1);
    expect(await gate.run({ id: 'c2', name: 'report', arguments: { n: 2 } }, session)).toMatchObject({
      status: 'committed',
    });
    expect(await gate.get('waiting')).toMatchObject({ status: 'awaiting_approval' });
    expect(await ledger.verify()).toMatchObject({ ok: true });
  }, 40_000);
});
