import { defineTool } from '@toolgate/core';
import { expect, it, vi } from 'vitest';
import { createFakeClock } from '@toolgate/test-utils';
import { createServerGate, transactionOf, type Ledger } from '../../src/index.ts';
import type { LedgerDatabase } from '../../src/ledger/schema.ts';
import { describeLedgers } from '../support/ledgers.ts';

const LEASE = 3_000;

/** A tool whose runs the test finishes by hand, keeping the key each run was given. */
function slowTool(name: string, flags: { idempotent?: boolean }) {
  const runs: { key: string; finish: (value: unknown) => void; signal: AbortSignal }[] = [];
  const tool = defineTool({
    name,
    inputSchema: { type: 'object' },
    ...flags,
    execute: (_input, ctx) =>
      new Promise<unknown>((resolve) => {
        runs.push({ key: ctx.idempotencyKey, finish: resolve, signal: ctx.signal });
      }),
  });
  return { tool, runs };
}

const row = (ledger: Ledger, id: string) =>
  ledger.db
    .selectFrom('toolgate_calls')
    .select(['status', 'fence', 'lease_owner', 'lease_expires_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

describeLedgers(
  'leases and fencing',
  (target) => {
    it('renews the lease while a tool runs, so another instance cannot take the call over', async () => {
      const store = await target.fresh();
      const start = Date.now();
      const clock = createFakeClock(start);
      const { tool, runs } = slowTool('ship', {});
      const a = createServerGate({
        tools: [tool],
        ledger: await store.open(),
        recover: false,
        clock,
        leaseMs: LEASE,
        instance: 'a',
      });
      const ledgerB = await store.open();
      const b = createServerGate({
        tools: [tool],
        ledger: ledgerB,
        recover: false,
        clock,
        leaseMs: LEASE,
        instance: 'b',
      });
      expect(
        (await a.propose({ id: 's1', name: 'ship', arguments: '{}' }, { session: 's', principal: 'p' }))
          .status,
      ).toBe('executing');
      const first = await row(ledgerB, 's1');
      clock.advance(LEASE / 3);
      await vi.waitFor(async () =>
        expect((await row(ledgerB, 's1')).lease_expires_at).toBeGreaterThan(first.lease_expires_at ?? 0),
      );
      clock.advance(LEASE / 3);
      await vi.waitFor(async () =>
        expect((await row(ledgerB, 's1')).lease_expires_at).toBeGreaterThan(start + LEASE),
      );
      clock.advance(LEASE / 3);
      expect(await b.recover()).toEqual({
        rerun: [],
        reconciling: [],
        held: [],
        interrupted: [],
        expired: [],
        reminded: [],
        escalated: [],
      });
      runs[0]?.finish({ shipped: true });
      expect(await a.settled('s1')).toMatchObject({ status: 'committed', output: { shipped: true } });
      await Promise.all([a.close(), b.close()]);
    });

    it('ends a non-idempotent call interrupted when its process stops renewing, and drops the late result as stale', async () => {
      const store = await target.fresh();
      const stalled = createFakeClock(Date.now());
      const later = createFakeClock(Date.now() + LEASE + 1);
      const { tool, runs } = slowTool('pay', {});
      const ledgerA = await store.open();
      const a = createServerGate({
        tools: [tool],
        ledger: ledgerA,
        recover: false,
        clock: stalled,
        leaseMs: LEASE,
        instance: 'a',
      });
      const b = createServerGate({
        tools: [tool],
        ledger: await store.open(),
        recover: false,
        clock: later,
        leaseMs: LEASE,
        instance: 'b',
      });
      await a.propose({ id: 'p1', name: 'pay', arguments: '{}' }, { session: 's', principal: 'p' });
      expect(await b.recover()).toEqual({
        rerun: [],
        reconciling: [],
        held: [],
        interrupted: ['p1'],
        expired: [],
        reminded: [],
        escalated: [],
      });
      expect(await b.get('p1')).toMatchObject({
        status: 'failed',
        reason: {
          code: 'interrupted',
          message: 'the server stopped while the tool ran; it may or may not have taken effect',
        },
      });
      expect(await b.toolResult('p1', 'openai-chat')).toMatchObject({
        content: expect.stringContaining('may or may not have taken effect'),
      });
      // A hears that its claim is gone (from the ledger's feed, or at its next renewal) and stops the tool.
      await vi.waitFor(() => expect(runs[0]?.signal.aborted).toBe(true));
      runs[0]?.finish({ paid: true });
      expect(await a.settled('p1')).toMatchObject({ status: 'failed', reason: { code: 'interrupted' } });
      expect((await ledgerA.eventsAfter(0)).map((event) => `${event.from}>${event.to}`)).toEqual([
        'null>pending',
        'pending>validated',
        'validated>executing',
        'executing>failed',
      ]);
      expect(runs).toHaveLength(1);
      expect(await a.verify()).toMatchObject({ ok: true });
      await Promise.all([a.close(), b.close()]);
    });

    it('re-runs an idempotent call with the same idempotency key, and only the new claim commits', async () => {
      const store = await target.fresh();
      const stalled = createFakeClock(Date.now());
      const later = createFakeClock(Date.now() + LEASE + 1);
      const { tool, runs } = slowTool('reserve', { idempotent: true });
      const a = createServerGate({
        tools: [tool],
        ledger: await store.open(),
        recover: false,
        clock: stalled,
        leaseMs: LEASE,
        instance: 'a',
      });
      const ledgerB = await store.open();
      const b = createServerGate({
        tools: [tool],
        ledger: ledgerB,
        recover: false,
        clock: later,
        leaseMs: LEASE,
        instance: 'b',
      });
      await a.propose({ id: 'r1', name: 'reserve', arguments: '{}' }, { session: 's', principal: 'p' });
      const before = await row(ledgerB, 'r1');
      expect(await b.recover()).toEqual({
        rerun: ['r1'],
        reconciling: [],
        held: [],
        interrupted: [],
        expired: [],
        reminded: [],
        escalated: [],
      });
      await vi.waitFor(() => expect(runs).toHaveLength(2));
      expect(runs[1]?.key).toBe(runs[0]?.key);
      expect(await row(ledgerB, 'r1')).toMatchObject({
        status: 'executing',
        fence: before.fence + 1,
        lease_owner: 'b',
      });
      // The first run's claim has passed to B: A stops its tool, and its result is dropped.
      await vi.waitFor(() => expect(runs[0]?.signal.aborted).toBe(true));
      runs[0]?.finish({ run: 1 });
      expect(await b.get('r1')).toMatchObject({ status: 'executing' });
      runs[1]?.finish({ run: 2 });
      expect(await b.settled('r1')).toMatchObject({ status: 'committed', output: { run: 2 } });
      const events = await ledgerB.eventsAfter(0);
      expect(
        events.filter((event) => event.reason?.code === 'recovered').map((event) => event.actor),
      ).toEqual(['toolgate:recovery']);
      expect(events.filter((event) => event.to === 'committed')).toHaveLength(1);
      expect((await a.get('r1'))?.output).toEqual({ run: 2 });
      await Promise.all([a.close(), b.close()]);
    });

    it('stops the tool of an instance whose call was cancelled on another instance', async () => {
      const store = await target.fresh();
      const clock = createFakeClock(Date.now());
      const { tool, runs } = slowTool('ship', {});
      const a = createServerGate({
        tools: [tool],
        ledger: await store.open(),
        recover: false,
        clock,
        leaseMs: LEASE,
        instance: 'a',
      });
      const b = createServerGate({
        tools: [tool],
        ledger: await store.open(),
        recover: false,
        clock,
        leaseMs: LEASE,
        instance: 'b',
      });
      await a.propose({ id: 'c1', name: 'ship', arguments: '{}' }, { session: 's', principal: 'p' });
      expect(await b.cancel('c1', { principal: 'p', reason: 'changed my mind' })).toEqual({ ok: true });
      // A hears of it at its next renewal, if not sooner from the ledger's feed.
      clock.advance(LEASE / 3);
      await vi.waitFor(() => expect(runs[0]?.signal.aborted).toBe(true));
      runs[0]?.finish({ shipped: true });
      expect(await a.settled('c1')).toMatchObject({
        status: 'cancelled',
        reason: { code: 'user_cancelled', message: 'changed my mind' },
      });
      await Promise.all([a.close(), b.close()]);
    });
    it('re-runs transactional calls once when two recoveries run at once, and each commits', async () => {
      // The sweep and a recover() of the app's own can overlap. The second one's take-over of a call
      // waits for the call's turn; the re-run's transaction must not wait behind it to commit (on
      // SQLite that transaction holds the one connection the take-over waits for).
      const store = await target.fresh();
      const stalled = createFakeClock(Date.now());
      const later = createFakeClock(Date.now() + LEASE + 1);
      const { tool: hanging } = slowTool('book', {});
      const a = createServerGate({
        tools: [hanging],
        ledger: await store.open(),
        recover: false,
        clock: stalled,
        leaseMs: LEASE,
        instance: 'a',
      });
      const ids = Array.from({ length: 6 }, (_, n) => `t${n}`);
      for (const id of ids)
        await a.propose({ id, name: 'book', arguments: '{}' }, { session: 's', principal: 'p' });
      const booked = defineTool({
        name: 'book',
        inputSchema: { type: 'object' },
        transactional: true,
        async execute(_input, ctx) {
          await transactionOf<LedgerDatabase>(ctx)
            .selectFrom('toolgate_calls')
            .select('id')
            .where('id', '=', ctx.call.id)
            .execute();
          return { booked: ctx.call.id };
        },
      });
      const b = createServerGate({
        tools: [booked],
        ledger: await store.open(),
        recover: false,
        clock: later,
        leaseMs: LEASE,
        instance: 'b',
      });
      const [first, second] = await Promise.all([b.recover(), b.recover()]);
      expect([...first.rerun, ...second.rerun].sort()).toEqual(ids);
      const settled = await Promise.all(ids.map((id) => b.settled(id)));
      expect(settled.map((call) => `${call?.id}:${call?.status}`)).toEqual(
        ids.map((id) => `${id}:committed`),
      );
      await Promise.all([a.close(), b.close()]);
    });
  },
  { shared: true },
);
