import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BACKSTOP_PAGES, sqliteCheckpoints } from '../../src/ledger/sqlite-checkpoints.ts';
import { start } from '../support/processes.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openFile() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-checkpoints-'));
  dirs.push(dir);
  const path = join(dir, 'ledger.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('create table t (id integer primary key, v text)');
  return { path, db };
}

// What SQLite's shared memory says of the log: the frames in it, and how many of them were copied
// into the database (the first header's mxFrame, then nBackfill after both copies of the header).
function log(path: string): { frames: number; copied: number } {
  const shm = readFileSync(`${path}-shm`);
  const read = (at: number) => (endianness() === 'LE' ? shm.readUInt32LE(at) : shm.readUInt32BE(at));
  return { frames: read(16), copied: read(96) };
}

describe('checkpoints of a SQLite file', () => {
  it('copies the log into the database once commits pause, so the log starts over, without the writing connection checkpointing', async () => {
    const { path, db } = openFile();
    const checkpoints = sqliteCheckpoints(path, (pages) => db.pragma(`wal_autocheckpoint = ${pages}`), {
      startAfter: 1,
      idleMs: 20,
    });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_PAGES);
    const insert = db.prepare('insert into t (v) values (?)');
    for (let i = 0; i < 30; i++) {
      insert.run('x'.repeat(2000));
      checkpoints.committed();
    }
    expect(log(path).frames).toBeGreaterThanOrEqual(30);
    await vi.waitFor(() => expect(log(path)).toMatchObject({ copied: log(path).frames }), { timeout: 5000 });
    insert.run('after the pause');
    checkpoints.committed();
    expect(log(path).frames).toBeLessThan(5);
    await checkpoints.stop();
    db.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = new Database(path, { readonly: true });
    expect(reopened.prepare('select count(*) as n from t').get()).toEqual({ n: 31 });
    reopened.close();
  });

  it('leaves the log to SQLite as before when the worker cannot open the file', async () => {
    const { path, db } = openFile();
    const checkpoints = sqliteCheckpoints(
      join(path, '..', 'missing.db'),
      (pages) => db.pragma(`wal_autocheckpoint = ${pages}`),
      { startAfter: 1, idleMs: 20 },
    );
    checkpoints.committed();
    await checkpoints.stop();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    db.close();
  });

  it('lets a program whose last work is closing its ledger finish: the worker is waited for, not abandoned', async () => {
    const { path, db } = openFile();
    db.close();
    // Enough commits that the ledger's checkpoint worker runs; then close() is all that is left.
    const child = start('close-last', [path, '150']);
    expect(await child.exited).toMatchObject({ code: 0, signal: null });
    expect(child.lines).toEqual([{ closed: true }]);
    expect(existsSync(`${path}-wal`)).toBe(false);
  }, 60_000);
});
