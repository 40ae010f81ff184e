// Someone with write access to the database (but not the audit key) edits a call that waits for
// a person: the approval must not run the edited input, the refusal is in the trail, and
// verify() names the call.
import { canonicalJson } from '@toolgate/core/kit';
import { defineTool, inputHash } from '@toolgate/core';
import { createHash } from 'node:crypto';
import { expect, it, vi } from 'vitest';
import { createFakeClock } from '@toolgate/test-utils';
import { createServerGate } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const runs: unknown[] = [];
const transfer = defineTool({
  name: 'transfer',
  inputSchema: {
    type: 'object',
    properties: { to: { type: 'string' }, cents: { type: 'integer' } },
    required: ['to', 'cents'],
  },
  needsApproval: true,
  execute: (input) => {
    runs.push(input);
    return { sent: input.cents };
  },
});
const session = { session: 's1', principal: 'alice' };
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describeLedgers('a call edited in the database while it waits for a person', (target) => {
  for (const how of ['its record and input', 'its record, input and both hashes'] as const) {
    it(`is refused as tampered when approved, never run, reported, and named by verify() (${how})`, async () => {
      runs.length = 0;
      const ledger = await (await target.fresh()).open({ auditKey: 'k'.repeat(32) });
      const onError = vi.fn();
      const gate = createServerGate({ tools: [transfer], ledger, recover: false, onError });
      const shown = await gate.propose(
        { id: 'c1', name: 'transfer', arguments: { to: 'bob', cents: 500 } },
        session,
      );
      expect(shown.status).toBe('awaiting_approval');
      const row = await ledger.db
        .selectFrom('toolgate_calls')
        .select('record')
        .where('id', '=', 'c1')
        .executeTakeFirstOrThrow();
      const evil = { to: 'mallory', cents: 500_000 };
      const record = { ...(JSON.parse(row.record) as object), input: evil };
      let update = ledger.db
        .updateTable('toolgate_calls')
        .set({ record: JSON.stringify(record), input: canonicalJson(evil) })
        .where('id', '=', 'c1');
      let approveWith = await inputHash(shown.input);
      if (how === 'its record, input and both hashes') {
        approveWith = sha(canonicalJson(evil));
        update = update.set({ input_hash: approveWith });
        await ledger.db
          .updateTable('toolgate_approvals')
          .set({ input_hash: approveWith })
          .where('call_id', '=', 'c1')
          .execute();
      }
      await update.execute();

      expect(await gate.approve('c1', { principal: 'alice', inputHash: approveWith })).toMatchObject({
        ok: false,
        code: 'tampered',
      });
      expect(runs).toEqual([]);
      expect(await gate.get('c1')).toMatchObject({ status: 'awaiting_approval' });
      expect(onError).toHaveBeenCalledWith(
        expect.objectContaining({ message: expect.stringContaining('was not run') }),
      );
      const refusal = (await ledger.eventsAfter(0)).find((event) => event.reason?.code === 'tampered');
      expect(refusal).toMatchObject({
        callId: 'c1',
        actor: 'alice',
        from: 'awaiting_approval',
        to: 'awaiting_approval',
      });
      expect(await gate.verify()).toMatchObject({
        ok: false,
        why: expect.stringContaining('call "c1" was changed in toolgate_calls'),
      });
      await gate.close();
    });
  }
});

// The same edit on a call whose process died while it ran: recovery would run it again (an
// idempotent tool) or end it (any other), from the row. What runs, and what the trail then
// records, must be what the chain covers.
describeLedgers(
  'a call edited in the database after its process died mid-run',
  (target) => {
    const LEASE = 3_000;
    for (const how of ['its record and input', 'its record, input and input hash'] as const) {
      for (const idempotent of [true, false]) {
        it(`is not run again by recovery, is refused and reported, and ends as the trail holds it (${idempotent ? 'idempotent' : 'plain'} tool; ${how})`, async () => {
          const store = await target.fresh();
          const keys: string[] = [];
          const inputs: unknown[] = [];
          const reserve = defineTool({
            name: 'reserve',
            inputSchema: {
              type: 'object',
              properties: { to: { type: 'string' }, cents: { type: 'integer' } },
              required: ['to', 'cents'],
            },
            idempotent,
            // The first run never returns: its process is gone.
            execute: (input, ctx) => {
              keys.push(ctx.idempotencyKey);
              inputs.push(input);
              return new Promise(() => undefined);
            },
          });
          const stalled = createFakeClock(Date.now());
          const later = createFakeClock(Date.now() + LEASE + 1);
          const a = createServerGate({
            tools: [reserve],
            ledger: await store.open(),
            recover: false,
            clock: stalled,
            leaseMs: LEASE,
            instance: 'a',
          });
          const ledger = await store.open();
          const onError = vi.fn();
          const b = createServerGate({
            tools: [reserve],
            ledger,
            recover: false,
            clock: later,
            leaseMs: LEASE,
            instance: 'b',
            onError,
          });
          const shown = await a.propose(
            { id: 'r1', name: 'reserve', arguments: { to: 'bob', cents: 500 } },
            session,
          );
          expect(shown.status).toBe('executing');
          await a.close();

          const row = await ledger.db
            .selectFrom('toolgate_calls')
            .select('record')
            .where('id', '=', 'r1')
            .executeTakeFirstOrThrow();
          const evil = { to: 'mallory', cents: 500_000 };
          let update = ledger.db
            .updateTable('toolgate_calls')
            .set({
              record: JSON.stringify({ ...(JSON.parse(row.record) as object), input: evil }),
              input: canonicalJson(evil),
            })
            .where('id', '=', 'r1');
          if (how === 'its record, input and input hash')
            update = update.set({ input_hash: sha(canonicalJson(evil)) });
          await update.execute();

          expect(await b.recover()).toEqual({
            rerun: [],
            reconciling: [],
            held: [],
            interrupted: ['r1'],
            expired: [],
            reminded: [],
            escalated: [],
          });
          expect(inputs).toEqual([{ to: 'bob', cents: 500 }]);
          // Ended from the record the trail holds, not the edited row.
          const ended = await b.get('r1');
          expect(ended).toMatchObject({
            status: 'failed',
            input: { to: 'bob', cents: 500 },
            reason: { code: 'interrupted' },
          });
          expect(onError).toHaveBeenCalledWith(
            expect.objectContaining({ message: expect.stringContaining('was not run again') }),
          );
          const refusal = (await ledger.eventsAfter(0)).find((event) => event.reason?.code === 'tampered');
          expect(refusal).toMatchObject({
            callId: 'r1',
            actor: 'toolgate:recovery',
            from: 'executing',
            to: 'executing',
          });
          expect(
            await ledger.db
              .selectFrom('toolgate_calls')
              .select(['input', 'input_hash'])
              .where('id', '=', 'r1')
              .executeTakeFirstOrThrow(),
          ).toEqual({
            input: canonicalJson({ to: 'bob', cents: 500 }),
            input_hash: await inputHash({ to: 'bob', cents: 500 }),
          });
          expect(await b.verify()).toMatchObject({ ok: true });
          await b.close();
        });
      }
    }
  },
  { shared: true },
);
