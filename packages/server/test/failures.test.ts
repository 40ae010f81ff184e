import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { expect, it, vi } from 'vitest';
import { LedgerError, postgresLedger, sqliteLedger } from '../src/index.ts';
import { appendMoves, callRow, move } from './support/events.ts';
import { describeLedgers, keep, postgresAdmin, scratchDirectory, withAdmin } from './support/ledgers.ts';

const retryWith = 'try again with the same call id, which is applied at most once.';

function conflict(dialect: 'sqlite' | 'postgres') {
  return dialect === 'sqlite'
    ? Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
    : Object.assign(new Error('could not serialize access due to concurrent update'), { code: '40001' });
}

describeLedgers('a transaction that conflicts', (target) => {
  it('is run again from the start, keeping nothing of the attempt that conflicted', async () => {
    const ledger = await (await target.fresh()).open();
    let attempts = 0;
    const event = await ledger.transaction(async (trx) => {
      attempts += 1;
      const appended = await ledger.appendEvent(trx, move(attempts));
      if (attempts === 1) throw conflict(target.dialect);
      return appended;
    });
    expect(attempts).toBe(2);
    expect(event).toMatchObject({ seq: 1, callId: 'call_2' });
    expect((await ledger.eventsAfter(0)).map((each) => each.callId)).toEqual(['call_2']);
  });

  it('gives up after a few attempts (on SQLite, once its busy timeout has passed) with ledger_unavailable, saving nothing', async () => {
    const ledger = await (await target.fresh()).open();
    let attempts = 0;
    const failing = ledger.transaction(async (trx) => {
      attempts += 1;
      await ledger.appendEvent(trx, move(attempts));
      throw conflict(target.dialect);
    });
    await expect(failing).rejects.toThrow(LedgerError);
    await expect(failing).rejects.toMatchObject({
      code: 'ledger_unavailable',
      message: expect.stringContaining(retryWith),
    });
    if (target.dialect === 'postgres') expect(attempts).toBe(5);
    else expect(attempts).toBeGreaterThanOrEqual(5);
    expect(await ledger.eventsAfter(0)).toEqual([]);
  });

  it('passes on, unchanged, an error that is not about the database being unavailable', async () => {
    const ledger = await (await target.fresh()).open();
    await appendMoves(ledger, 1);
    const duplicate = ledger.transaction(async (trx) => {
      await trx
        .insertInto('toolgate_events')
        .values({
          seq: 1,
          call_id: 'c',
          session: 's',
          from_status: null,
          to_status: 'pending',
          actor: 'a',
          at: 0,
          reason: null,
          prev_hash: '',
          hash: '',
        })
        .execute();
    });
    await expect(duplicate).rejects.not.toBeInstanceOf(LedgerError);
    await expect(duplicate).rejects.toThrow(/UNIQUE|duplicate key/);
  });
});

describeLedgers('a ledger that was closed', (target) => {
  it('refuses transactions and reads with ledger_unavailable', async () => {
    const ledger = await (await target.fresh()).open();
    await ledger.close();
    await expect(ledger.transaction(async () => 'never')).rejects.toMatchObject({
      name: 'LedgerError',
      code: 'ledger_unavailable',
      message: expect.stringContaining('it was closed'),
    });
    await expect(ledger.eventsAfter(0)).rejects.toMatchObject({ code: 'ledger_unavailable' });
    await expect(ledger.verify()).rejects.toMatchObject({ code: 'ledger_unavailable' });
  });

  it('lets a transaction that was running when close() was called commit first', async () => {
    const ledger = await (await target.fresh()).open();
    let proceed!: () => void;
    const gate = new Promise<void>((resolve) => {
      proceed = resolve;
    });
    let appended!: () => void;
    const started = new Promise<void>((resolve) => {
      appended = resolve;
    });
    const running = ledger.transaction(async (trx) => {
      const event = await ledger.appendEvent(trx, move(1));
      appended();
      await gate;
      return event;
    });
    await started;
    const closed = ledger.close();
    proceed();
    await expect(running).resolves.toMatchObject({ seq: 1 });
    await closed;
  });
});

describeLedgers(
  'a SQLite ledger that cannot use its file',
  () => {
    it('cannot be opened in a directory that does not exist', async () => {
      const path = join(scratchDirectory(), 'gone', 'ledger.db');
      const opening = sqliteLedger({ path });
      await expect(opening).rejects.toThrow(LedgerError);
      await expect(opening).rejects.toMatchObject({
        code: 'ledger_unavailable',
        message: expect.stringContaining(
          `The ledger is unavailable: cannot open ${path}: the directory of the SQLite database file does not exist`,
        ),
      });
    });

    it('answers ledger_unavailable once its directory was removed, rather than writing to a file nobody can find', async () => {
      const directory = join(scratchDirectory(), 'vanishing');
      mkdirSync(directory);
      const ledger = keep(await sqliteLedger({ path: join(directory, 'ledger.db') }));
      await appendMoves(ledger, 1);
      rmSync(directory, { recursive: true });
      await expect(ledger.transaction((trx) => ledger.appendEvent(trx, move(2)))).rejects.toMatchObject({
        code: 'ledger_unavailable',
        message: expect.stringContaining(
          'The ledger is unavailable: the SQLite database file was moved or removed while the ledger had it open',
        ),
      });
    });

    it('answers ledger_unavailable while another connection holds the write lock, and works once it is let go', async () => {
      const path = join(scratchDirectory(), 'locked.db');
      const ledger = keep(await sqliteLedger({ path, busyTimeoutMs: 10 }));
      const other = new Database(path);
      other.exec('begin immediate');
      try {
        const blocked = ledger.transaction((trx) => ledger.appendEvent(trx, move(1)));
        await expect(blocked).rejects.toMatchObject({
          code: 'ledger_unavailable',
          message: expect.stringContaining(
            'The ledger is unavailable: the SQLite database is locked by another connection (database is locked).',
          ),
        });
        await expect(blocked).rejects.toThrow(retryWith);
      } finally {
        other.exec('rollback');
        other.close();
      }
      expect(await ledger.eventsAfter(0)).toEqual([]);
      await expect(appendMoves(ledger, 1)).resolves.toMatchObject([{ seq: 1 }]);
    });
  },
  { shared: true, dialects: ['sqlite'] },
);

describeLedgers(
  'a PostgreSQL ledger that cannot reach its database',
  (target) => {
    it('cannot be opened on a port nothing listens on', async () => {
      const url = new URL(postgresAdmin ?? 'postgres://postgres@127.0.0.1/postgres');
      url.port = '1';
      const opening = postgresLedger({ connectionString: url.toString() });
      await expect(opening).rejects.toThrow(LedgerError);
      await expect(opening).rejects.toMatchObject({
        code: 'ledger_unavailable',
        message: expect.stringContaining(
          'The ledger is unavailable: PostgreSQL refused the connection (is it running, on that host and port?)',
        ),
      });
    });

    it('cannot be opened on a database that does not exist', async () => {
      const url = new URL(postgresAdmin ?? 'postgres://postgres@127.0.0.1/postgres');
      url.pathname = '/tg_missing_database';
      await expect(postgresLedger({ connectionString: url.toString() })).rejects.toMatchObject({
        code: 'ledger_unavailable',
        message: expect.stringContaining('The ledger is unavailable: the PostgreSQL database does not exist'),
      });
    });

    it('answers ledger_unavailable when the connection breaks in the middle of a transaction, and saves none of it', async () => {
      const store = await target.fresh();
      const onError = vi.fn();
      const ledger = await store.open({ onError });
      const broken = ledger.transaction(async (trx) => {
        await ledger.appendEvent(trx, move(1));
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        await withAdmin(postgresAdmin!, (admin) =>
          admin.query('select pg_terminate_backend($1)', [rows[0]?.pid]),
        );
        await trx.insertInto('toolgate_calls').values(callRow('call_1')).execute();
      });
      await expect(broken).rejects.toMatchObject({
        code: 'ledger_unavailable',
        message: expect.stringContaining(retryWith),
      });
      // The broken connection's 'error' event may come after the transaction has failed, and says
      // what the socket saw: the server's notice, a reset, or an unexpected end, by timing.
      await vi.waitFor(() =>
        expect(onError).toHaveBeenCalledWith(
          expect.objectContaining({
            message: expect.stringMatching(
              /terminating connection due to administrator command|ECONNRESET|Connection terminated unexpectedly/,
            ),
          }),
        ),
      );
      expect(await ledger.eventsAfter(0)).toEqual([]);
      expect(await appendMoves(ledger, 1)).toMatchObject([{ seq: 1 }]);
    });

    it('answers ledger_unavailable while the database refuses connections, and works again after', async () => {
      const store = await target.fresh();
      const onError = vi.fn();
      const ledger = await store.open({ onError });
      await appendMoves(ledger, 1);
      const database = new URL(store.location).pathname.slice(1);
      await withAdmin(postgresAdmin!, async (admin) => {
        await admin.query(`alter database ${database} allow_connections false`);
        await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [
          database,
        ]);
      });
      try {
        const down = ledger.transaction((trx) => ledger.appendEvent(trx, move(2)));
        await expect(down).rejects.toThrow(LedgerError);
        await expect(down).rejects.toMatchObject({
          code: 'ledger_unavailable',
          message: expect.stringContaining(retryWith),
        });
        await expect(ledger.eventsAfter(0)).rejects.toMatchObject({
          code: 'ledger_unavailable',
          message: expect.stringContaining('Nothing was read; try again.'),
        });
      } finally {
        await withAdmin(postgresAdmin!, (admin) =>
          admin.query(`alter database ${database} allow_connections true`),
        );
      }
      await expect(appendMoves(ledger, 1, 2)).resolves.toMatchObject([{ seq: 2 }]);
      expect(onError).toHaveBeenCalled();
    });
  },
  { dialects: ['postgres'] },
);
