import { describe, expect, it } from 'vitest';
import type { Ledger } from '../src/index.ts';
import { chainHasher } from '../src/ledger/chain/chain.ts';
import type { EventsTable } from '../src/ledger/schema.ts';
import { appendMoves, callRow, move, T0 } from './support/events.ts';
import { describeLedgers } from './support/ledgers.ts';

const seqs = async (ledger: Ledger) => (await ledger.eventsAfter(0)).map((event) => event.seq);

// What someone with write access to the database, but not the audit key, can do: recompute a
// row's hash with plain SHA-256 after changing it.
async function forge(ledger: Ledger, seq: number, change: Partial<EventsTable> = {}) {
  const row = await ledger.db
    .selectFrom('toolgate_events')
    .selectAll()
    .where('seq', '=', seq)
    .executeTakeFirstOrThrow();
  const changed = { ...row, ...change };
  const hash = chainHasher(undefined).hash(changed.prev_hash, changed);
  await ledger.db
    .updateTable('toolgate_events')
    .set({ ...change, hash })
    .where('seq', '=', seq)
    .execute();
  return hash;
}

// Moves events `from` and later up by one, in two steps, since a primary key is checked row by row.
async function renumberFrom(ledger: Ledger, from: number, by: number) {
  await ledger.db
    .updateTable('toolgate_events')
    .set((eb) => ({ seq: eb.neg(eb.ref('seq')) }))
    .where('seq', '>=', from)
    .execute();
  await ledger.db
    .updateTable('toolgate_events')
    .set((eb) => ({ seq: eb(eb.neg(eb.ref('seq')), '+', by) }))
    .where('seq', '<', 0)
    .execute();
}

async function headOf(ledger: Ledger) {
  return ledger.db.selectFrom('toolgate_chain').select(['last_seq', 'last_hash']).executeTakeFirstOrThrow();
}

describeLedgers('the event chain', (target) => {
  it('numbers events from 1 without gaps, and gives them back as they were appended', async () => {
    const ledger = await (await target.fresh()).open();
    const appended = await appendMoves(ledger, 3);
    const refused = await ledger.transaction((trx) =>
      ledger.appendEvent(
        trx,
        move(4, {
          from: 'awaiting_approval',
          to: 'awaiting_approval',
          actor: 'user_2',
          reason: {
            code: 'invalid_arguments',
            message: 'Approval refused',
            issues: [{ path: '/amount', message: 'must be integer', keyword: 'type' }],
          },
        }),
      ),
    );
    expect([...appended, refused].map((event) => event.seq)).toEqual([1, 2, 3, 4]);
    expect(await ledger.eventsAfter(0)).toEqual([...appended, refused]);
    expect(refused).toEqual({
      seq: 4,
      callId: 'call_4',
      session: 's1',
      from: 'awaiting_approval',
      to: 'awaiting_approval',
      actor: 'user_2',
      at: T0 + 4,
      reason: {
        code: 'invalid_arguments',
        message: 'Approval refused',
        issues: [{ path: '/amount', message: 'must be integer', keyword: 'type' }],
      },
    });
    expect(appended[0]).not.toHaveProperty('reason');
    expect(await ledger.verify()).toMatchObject({ ok: true, events: 4 });
  });

  it('reads events after a seq, for one session, a page at a time', async () => {
    const ledger = await (await target.fresh()).open();
    for (let n = 1; n <= 6; n += 1)
      await ledger.transaction((trx) =>
        ledger.appendEvent(trx, move(n, { session: n % 2 === 0 ? 'even' : 'odd' })),
      );
    expect((await ledger.eventsAfter(2)).map((event) => event.seq)).toEqual([3, 4, 5, 6]);
    expect((await ledger.eventsAfter(0, { session: 'even' })).map((event) => event.seq)).toEqual([2, 4, 6]);
    expect((await ledger.eventsAfter(2, { session: 'even', limit: 1 })).map((event) => event.seq)).toEqual([
      4,
    ]);
    expect(await ledger.eventsAfter(6)).toEqual([]);
  });

  it('gives concurrent transactions gapless numbers, and a reader following along misses none', async () => {
    const ledger = await (await target.fresh()).open();
    const seen: number[] = [];
    let writing = true;
    const reader = (async () => {
      for (;;) {
        const last = !writing;
        seen.push(...(await ledger.eventsAfter(seen.at(-1) ?? 0)).map((event) => event.seq));
        if (last) return;
      }
    })();
    try {
      await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          ledger.transaction(async (trx) => {
            const event = await ledger.appendEvent(trx, move(index + 1));
            // More work after the append, while the chain head stays locked.
            await trx
              .selectFrom('toolgate_events')
              .select('seq')
              .where('call_id', '=', event.callId)
              .execute();
            return event;
          }),
        ),
      );
    } finally {
      writing = false;
    }
    await reader;
    expect(seen).toEqual(Array.from({ length: 30 }, (_, index) => index + 1));
    expect(await ledger.verify()).toMatchObject({ ok: true, events: 30 });
  });

  it('keeps nothing of a transaction that threw, and the next event takes its number', async () => {
    const ledger = await (await target.fresh()).open();
    await appendMoves(ledger, 1);
    const failure = new Error('the tool broke');
    await expect(
      ledger.transaction(async (trx) => {
        await ledger.appendEvent(trx, move(2));
        await trx.insertInto('toolgate_calls').values(callRow('call_2')).execute();
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await seqs(ledger)).toEqual([1]);
    expect(await ledger.db.selectFrom('toolgate_calls').select('id').execute()).toEqual([]);
    const [next] = await appendMoves(ledger, 1, 3);
    expect(next).toMatchObject({ seq: 2, callId: 'call_3' });
    expect(await ledger.verify()).toMatchObject({ ok: true, events: 2 });
  });

  it('refuses a transaction, or a read, started by app code a running transaction awaits, instead of waiting forever', async () => {
    const ledger = await (await target.fresh()).open();
    let later: Promise<unknown> | undefined;
    await expect(
      ledger.transaction(async (trx) => {
        await ledger.appendEvent(trx, move(1));
        await ledger.inApp(async () => {
          await expect(ledger.transaction(async () => 'inner')).rejects.toThrow(
            "ledger.transaction was called by code a ledger transaction awaits (a tool's `approvers`): it may not use the ledger, as on SQLite it would wait forever for the connection that transaction holds.",
          );
          await expect(ledger.eventsAfter(0)).rejects.toThrow(
            'ledger.eventsAfter was called by code a ledger transaction awaits',
          );
          await expect(ledger.begin()).rejects.toThrow(
            'ledger.begin was called by code a ledger transaction awaits',
          );
          // Work started inside but run after the app code was done is not nested.
          later = new Promise((resolve) => setTimeout(resolve, 0)).then(() =>
            ledger.transaction((next) => ledger.appendEvent(next, move(2))),
          );
        });
        return 'outer';
      }),
    ).resolves.toBe('outer');
    await expect(later).resolves.toMatchObject({ seq: 2 });
    expect(await seqs(ledger)).toEqual([1, 2]);
  });

  it('refuses an append outside the transaction the ledger is running', async () => {
    const ledger = await (await target.fresh()).open();
    await expect(ledger.db.transaction().execute((trx) => ledger.appendEvent(trx, move(1)))).rejects.toThrow(
      'appendEvent must be given the transaction that ledger.transaction(...) is running.',
    );
    expect(await seqs(ledger)).toEqual([]);
  });
});

describeLedgers('verify() on a tampered chain', (target) => {
  async function sixEvents(options = {}) {
    const ledger = await (await target.fresh()).open(options);
    await appendMoves(ledger, 6);
    return ledger;
  }

  it('names an event whose field was changed', async () => {
    const ledger = await sixEvents();
    await ledger.db.updateTable('toolgate_events').set({ actor: 'mallory' }).where('seq', '=', 3).execute();
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: 3,
      why: 'event 3 was changed: its fields no longer match its hash',
    });
  });

  it('names an event that was changed and re-hashed', async () => {
    const ledger = await sixEvents();
    await forge(ledger, 3, { to_status: 'committed' });
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: 3,
      why: 'event 3 was changed: event 4 was written after an event with another hash',
    });
  });

  it('names the last event when it was changed and re-hashed', async () => {
    const ledger = await sixEvents();
    await forge(ledger, 6, { at: T0 });
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: 6,
      why: 'event 6 was changed: its hash is not the one the chain head recorded',
    });
  });

  it('names an event removed from the middle', async () => {
    const ledger = await sixEvents();
    await ledger.db.deleteFrom('toolgate_events').where('seq', '=', 3).execute();
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: 3,
      why: 'event 3 was removed: event 4 follows event 2',
    });
  });

  it('names an event removed from the middle when the later ones were renumbered to close the gap', async () => {
    const ledger = await sixEvents();
    await ledger.db.deleteFrom('toolgate_events').where('seq', '=', 3).execute();
    await renumberFrom(ledger, 4, -1);
    await ledger.db.updateTable('toolgate_chain').set({ last_seq: 5 }).execute();
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: 3,
      why: 'event 3 was removed: the event now numbered 3 was written as event 4',
    });
  });

  it('names the last event when it was removed', async () => {
    const ledger = await sixEvents();
    await ledger.db.deleteFrom('toolgate_events').where('seq', '=', 6).execute();
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: 6,
      why: 'event 6 was removed: the chain ends at event 5, but its head says 6',
    });
  });

  it('names an event inserted after the end', async () => {
    const ledger = await sixEvents();
    const last = await ledger.db
      .selectFrom('toolgate_events')
      .selectAll()
      .where('seq', '=', 6)
      .executeTakeFirstOrThrow();
    const row = { ...last, seq: 7, call_id: 'call_forged', prev_hash: last.hash };
    await ledger.db
      .insertInto('toolgate_events')
      .values({ ...row, hash: chainHasher(undefined).hash(row.prev_hash, row) })
      .execute();
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: 7,
      why: 'event 7 was inserted after the end of the chain (its head is event 6)',
    });
  });

  it('names an event inserted in the middle, the later ones renumbered to make room', async () => {
    const ledger = await sixEvents();
    await renumberFrom(ledger, 3, 1);
    const before = await ledger.db
      .selectFrom('toolgate_events')
      .selectAll()
      .where('seq', '=', 2)
      .executeTakeFirstOrThrow();
    const row = { ...before, seq: 3, call_id: 'call_forged', prev_hash: before.hash };
    await ledger.db
      .insertInto('toolgate_events')
      .values({ ...row, hash: chainHasher(undefined).hash(row.prev_hash, row) })
      .execute();
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: 3,
      why: 'event 3 was inserted: the next event was written as event 3',
    });
  });

  it('shows, through the hash it answers, a chain rewritten from start to end', async () => {
    const ledger = await sixEvents();
    const kept = await ledger.verify();
    let prevHash = '0'.repeat(64);
    for (let seq = 1; seq <= 6; seq += 1) {
      await ledger.db
        .updateTable('toolgate_events')
        .set({ prev_hash: prevHash })
        .where('seq', '=', seq)
        .execute();
      prevHash = await forge(ledger, seq, seq === 2 ? { actor: 'mallory' } : {});
    }
    await ledger.db.updateTable('toolgate_chain').set({ last_hash: prevHash }).execute();
    const now = await ledger.verify();
    expect(now).toMatchObject({ ok: true, events: 6 });
    expect(now).not.toEqual(kept);
  });
});

/** Appends `count` moves numbered from `first`, a few hundred to a transaction. */
async function appendMany(ledger: Ledger, count: number, first = 1) {
  for (let n = first; n < first + count; n += 300) {
    const events = Array.from({ length: Math.min(300, first + count - n) }, (_, index) => move(n + index));
    await ledger.transaction((trx) => ledger.appendEvents(trx, events));
  }
}

describeLedgers('verifying from a checkpoint, with progress', (target) => {
  it('walks only the events after a verification kept from before, and says how far it got after each page', async () => {
    const ledger = await (await target.fresh()).open();
    await appendMany(ledger, 1000);
    const kept = await ledger.verify();
    expect(kept).toMatchObject({ ok: true, events: 1000 });
    await appendMany(ledger, 1200, 1001);
    const progress: unknown[] = [];
    const now = await ledger.verify({
      from: kept as { events: number; hash: string },
      onProgress: (step) => progress.push(step),
    });
    expect(now).toMatchObject({ ok: true, events: 2200 });
    expect(progress).toEqual([
      { seq: 1500, head: 2200, walked: 500, calls: 0 },
      { seq: 2000, head: 2200, walked: 1000, calls: 0 },
      { seq: 2200, head: 2200, walked: 1200, calls: 0 },
    ]);
    // The whole walk answers the same.
    expect(await ledger.verify()).toEqual(now);
    // From the head itself, nothing is left to walk.
    const none: unknown[] = [];
    expect(
      await ledger.verify({
        from: now as { events: number; hash: string },
        onProgress: (step) => none.push(step),
      }),
    ).toEqual(now);
    expect(none).toEqual([]);
  });

  it('names a change after the checkpoint, and a checkpoint whose event was changed, removed or cut off', async () => {
    const ledger = await (await target.fresh()).open();
    await appendMoves(ledger, 6);
    const kept = (await ledger.verify()) as { ok: true; events: number; hash: string };
    await appendMoves(ledger, 3, 7);
    await ledger.db.updateTable('toolgate_events').set({ actor: 'mallory' }).where('seq', '=', 8).execute();
    expect(await ledger.verify({ from: kept })).toEqual({
      ok: false,
      seq: 8,
      why: 'event 8 was changed: its fields no longer match its hash',
    });
    await ledger.db.updateTable('toolgate_events').set({ actor: 'user_1' }).where('seq', '=', 8).execute();
    expect(await ledger.verify({ from: kept })).toMatchObject({ ok: true, events: 9 });

    // History rewritten up to the checkpoint, re-hashed without a key: the database agrees with itself, the checkpoint does not.
    const original = await ledger.db
      .selectFrom('toolgate_events')
      .selectAll()
      .where('seq', '<=', 7)
      .orderBy('seq')
      .execute();
    let prevHash = '0'.repeat(64);
    for (let seq = 1; seq <= 7; seq += 1) {
      await ledger.db
        .updateTable('toolgate_events')
        .set({ prev_hash: prevHash })
        .where('seq', '=', seq)
        .execute();
      prevHash = await forge(ledger, seq, seq === 2 ? { actor: 'mallory' } : {});
    }
    expect(await ledger.verify({ from: kept })).toEqual({
      ok: false,
      seq: 6,
      why: 'event 6 is not the one the checkpoint covers: it, or the history before it, was rewritten',
    });
    for (const row of original)
      await ledger.db.updateTable('toolgate_events').set(row).where('seq', '=', row.seq).execute();
    expect(await ledger.verify({ from: kept })).toMatchObject({ ok: true, events: 9 });

    // Cut back to before the checkpoint, the head moved back with it.
    await ledger.db.deleteFrom('toolgate_events').where('seq', '>=', 5).execute();
    const four = await ledger.db
      .selectFrom('toolgate_events')
      .select('hash')
      .where('seq', '=', 4)
      .executeTakeFirstOrThrow();
    await ledger.db.updateTable('toolgate_chain').set({ last_seq: 4, last_hash: four.hash }).execute();
    expect(await ledger.verify()).toMatchObject({ ok: true, events: 4 });
    expect(await ledger.verify({ from: kept })).toEqual({
      ok: false,
      seq: 5,
      why: 'the chain was cut: it ends at event 4, but the checkpoint covers 6 events',
    });
    await expect(ledger.verify({ from: { events: -1, hash: kept.hash } })).rejects.toThrow(TypeError);
  });
});

describeLedgers('a chain keyed with an auditKey', (target) => {
  const auditKey = 'a secret kept away from the database';

  it('verifies with the key, and catches a row re-hashed without it', async () => {
    const ledger = await (await target.fresh()).open({ auditKey });
    await appendMoves(ledger, 4);
    expect(await ledger.verify()).toMatchObject({ ok: true, events: 4 });
    await forge(ledger, 2, { actor: 'mallory' });
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: 2,
      why: 'event 2 was changed: its fields no longer match its hash',
    });
  });

  it('names an event inserted in the middle by someone without the key', async () => {
    const ledger = await (await target.fresh()).open({ auditKey });
    await appendMoves(ledger, 4);
    await renumberFrom(ledger, 3, 1);
    const before = await ledger.db
      .selectFrom('toolgate_events')
      .selectAll()
      .where('seq', '=', 2)
      .executeTakeFirstOrThrow();
    const row = { ...before, seq: 3, call_id: 'call_forged', prev_hash: before.hash };
    await ledger.db
      .insertInto('toolgate_events')
      .values({ ...row, hash: chainHasher(undefined).hash(row.prev_hash, row) })
      .execute();
    expect(await ledger.verify()).toEqual({
      ok: false,
      seq: 3,
      why: 'event 3 was inserted: event 4 was written as event 3, right after event 2',
    });
  });

  it('hashes differently from an unkeyed chain of the same events', async () => {
    const keyed = await (await target.fresh()).open({ auditKey });
    const [event] = await appendMoves(keyed, 1);
    const row = await keyed.db.selectFrom('toolgate_events').selectAll().executeTakeFirstOrThrow();
    expect(row.hash).toBe(chainHasher(auditKey).hash(row.prev_hash, row));
    expect(row.hash).not.toBe(chainHasher(undefined).hash(row.prev_hash, row));
    expect(event?.seq).toBe(1);
  });
});

describeLedgers(
  'a keyed chain opened again',
  (target) => {
    it('must be opened with a key, and an unkeyed one without', async () => {
      const keyedStore = await target.fresh();
      const keyed = await keyedStore.open({ auditKey: 'k1' });
      await appendMoves(keyed, 1);
      await keyed.close();
      await expect(keyedStore.open()).rejects.toThrow(
        'This ledger’s audit chain is keyed (HMAC-SHA256): open it with the auditKey it was written with.',
      );
      const again = await keyedStore.open({ auditKey: 'k1' });
      expect(await again.verify()).toMatchObject({ ok: true, events: 1 });
      const wrongKey = await keyedStore.open({ auditKey: 'k2' });
      expect(await wrongKey.verify()).toEqual({
        ok: false,
        seq: 1,
        why: 'event 1 was changed: its fields no longer match its hash (or the ledger was opened with another auditKey than the one it was written with)',
      });
    });

    it('refuses a key on a chain written without one', async () => {
      const store = await target.fresh();
      const plain = await store.open();
      await appendMoves(plain, 1);
      await expect(store.open({ auditKey: 'k1' })).rejects.toThrow(
        'This ledger’s audit chain was written without an auditKey: open it without one, or start a new ledger to key its chain.',
      );
    });
  },
  { shared: true },
);

describeLedgers(
  'two app servers on one database',
  (target) => {
    it('hand out one gapless sequence between them, in commit order', async () => {
      const store = await target.fresh();
      const [a, b] = await Promise.all([store.open(), store.open()]);
      const work = (ledger: Ledger, first: number) =>
        Promise.all(
          Array.from({ length: 20 }, (_, index) =>
            ledger.transaction(async (trx) => {
              const event = await ledger.appendEvent(trx, move(first + index));
              await trx.selectFrom('toolgate_calls').select('id').execute();
              return event;
            }),
          ),
        );
      const seen: number[] = [];
      let writing = true;
      const reader = (async () => {
        for (;;) {
          const last = !writing;
          seen.push(...(await a.eventsAfter(seen.at(-1) ?? 0)).map((event) => event.seq));
          if (last) return;
        }
      })();
      const [fromA, fromB] = await Promise.all([work(a, 1), work(b, 101)]).finally(() => {
        writing = false;
      });
      await reader;
      expect(seen).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
      expect([...fromA, ...fromB].map((event) => event.seq).sort((x, y) => x - y)).toEqual(seen);
      expect(await b.verify()).toMatchObject({ ok: true, events: 40 });
    });
  },
  { dialects: ['postgres'] },
);

describeLedgers(
  'two ledger objects on one SQLite file',
  (target) => {
    it('continue one chain between them, each reading the head the other wrote', async () => {
      const store = await target.fresh();
      const [a, b] = [await store.open(), await store.open()];
      for (let n = 1; n <= 6; n += 1) {
        const ledger = n % 2 === 0 ? b : a;
        await ledger.transaction((trx) => ledger.appendEvent(trx, move(n)));
      }
      expect(await seqs(a)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(await a.verify()).toMatchObject({ ok: true, events: 6 });
      expect(await headOf(b)).toMatchObject({ last_seq: 6 });
    });
  },
  { shared: true, dialects: ['sqlite'] },
);

describe('chainHasher', () => {
  it('refuses an empty key', () => {
    expect(() => chainHasher('')).toThrow('auditKey is empty');
  });
});
