import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Ledger } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';
import { startPaymentApi, type PaymentApi } from '../support/payment-api.ts';
import { compile, type Child, type Program } from '../support/processes.ts';

// App servers in processes of their own, charging through a payment provider on 127.0.0.1 and
// killed with SIGKILL in the middle of a charge or a refund. A later process recovers what they
// left; the ledger and the provider's own records are read afterwards, not the processes' words.

let api: PaymentApi;
beforeEach(async () => {
  api = await startPaymentApi();
});
afterEach(() => api.close());

const started: Child[] = [];
afterEach(async () => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
});

let program: Promise<Program> | undefined;
const LEASE = '400';

async function startGate(
  where: string,
  instance: string,
  env: Record<string, string> = {},
  lease = LEASE,
): Promise<Child> {
  program ??= compile('payment-gate');
  const child = (await program).start([where, api.url, instance, lease], { env });
  started.push(child);
  await child.line((message) => message.ready === true);
  return child;
}

let refs = 0;
async function ask(child: Child, request: Record<string, unknown>): Promise<Record<string, unknown>> {
  const ref = ++refs;
  child.send({ ref, ...request });
  const answer = await child.line((message) => message.ref === ref);
  if ('error' in answer) throw new Error(JSON.stringify(answer.error));
  return answer;
}

async function killed(child: Child): Promise<void> {
  child.kill('SIGKILL');
  expect((await child.exited).signal).toBe('SIGKILL');
}

async function exits(child: Child): Promise<void> {
  child.send({ op: 'exit' });
  const exit = await child.exited;
  expect(exit.code, exit.stderr).toBe(0);
}

const posts = (path: string) =>
  api.requests.filter((request) => request.method === 'POST' && request.path === path);
const lookups = () => api.requests.filter((request) => request.method === 'GET');

async function trail(ledger: Ledger, id: string) {
  return (await ledger.eventsAfter(0, { limit: 1000 }))
    .filter((event) => event.callId === id)
    .map(
      (event) =>
        `${event.from ?? 'null'}>${event.to}${event.reason ? `:${event.reason.code}` : ''}@${event.actor}`,
    );
}

const row = (ledger: Ledger, id: string) =>
  ledger.db.selectFrom('toolgate_calls').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describeLedgers(
  'a payment whose process was killed, recovered on the provider’s evidence',
  (target) => {
    it('charge recorded, then SIGKILL: committed once, on evidence, never charged again', async () => {
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      api.behave('charge', 'record-then-hang');
      const first = await startGate(where, 'a');
      first.send({ ref: 'p', op: 'propose', id: 'call_1', order: 'o_1', amount_cents: 1250 });
      await api.charged(1);
      await killed(first);
      const ledger = await store.open();
      expect(await row(ledger, 'call_1')).toMatchObject({ status: 'executing', lease_owner: 'a' });

      const second = await startGate(where, 'b');
      const { record } = await ask(second, { op: 'settled', id: 'call_1' });
      expect(record).toMatchObject({
        status: 'committed',
        output: { charge: 'ch_1', amount_cents: 1250 },
        evidence: { source: 'downstream' },
      });
      await exits(second);
      expect(await row(ledger, 'call_1')).toMatchObject({
        status: 'committed',
        idempotency_key: 'charge:o_1',
      });
      expect(api.charges).toHaveLength(1);
      expect(posts('/charges')).toHaveLength(1);
      expect(lookups()).toEqual([{ method: 'GET', path: '/charges', key: null }]);
      expect(await trail(ledger, 'call_1')).toEqual([
        'null>pending@alice',
        'pending>validated@alice',
        'validated>executing@alice',
        'executing>executing:recovered@toolgate:recovery',
        'executing>committed@toolgate:reconcile',
      ]);
      expect(await ledger.verify()).toMatchObject({ ok: true });
    }, 60_000);

    it('SIGKILL before the request left: run again once with the same key, one charge', async () => {
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      const first = await startGate(where, 'a', { TOOLGATE_KILL: 'request' });
      first.send({ ref: 'p', op: 'propose', id: 'call_2', order: 'o_2', amount_cents: 700 });
      await first.line((message) => message.killed === 'request');
      expect((await first.exited).signal).toBe('SIGKILL');
      expect(api.requests).toEqual([]);

      const second = await startGate(where, 'b');
      const { record } = await ask(second, { op: 'settled', id: 'call_2' });
      expect(record).toMatchObject({
        status: 'committed',
        output: { charge: 'ch_1', amount_cents: 700 },
        attempt: 2,
      });
      expect((record as { evidence?: unknown }).evidence).toBeUndefined();
      await exits(second);
      const ledger = await store.open();
      expect(api.charges).toHaveLength(1);
      expect(posts('/charges').map((request) => request.key)).toEqual(['charge:o_2']);
      expect(lookups()).toHaveLength(1);
      expect(await trail(ledger, 'call_2')).toEqual([
        'null>pending@alice',
        'pending>validated@alice',
        'validated>executing@alice',
        'executing>executing:recovered@toolgate:recovery',
        'executing>executing:run_again@toolgate:reconcile',
        'executing>committed@toolgate:recovery',
      ]);
      expect(await ledger.verify()).toMatchObject({ ok: true });
    }, 60_000);

    it('unknown with onUnknown "hold": held across sweeps and restarts, never run again until a person resolves it', async () => {
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      const hold = { TOOLGATE_ON_UNKNOWN: 'hold' };
      api.behave('charge', 'hang');
      api.behave('lookup', 'error');
      const first = await startGate(where, 'a', hold);
      first.send({ ref: 'p', op: 'propose', id: 'call_3', order: 'o_3', amount_cents: 300 });
      await expect.poll(() => posts('/charges').length).toBe(1);
      await killed(first);

      const second = await startGate(where, 'b', hold);
      const { record } = await ask(second, { op: 'stopped', id: 'call_3' });
      expect(record).toMatchObject({
        status: 'executing',
        doubt: { message: expect.stringContaining('the server stopped while the tool ran') },
      });
      const ledger = await store.open();
      expect(await row(ledger, 'call_3')).toMatchObject({
        status: 'executing',
        lease_owner: null,
        lease_expires_at: null,
      });
      for (let sweep = 0; sweep < 3; sweep += 1)
        expect((await ask(second, { op: 'recover' })).recovery).toMatchObject({
          rerun: [],
          reconciling: [],
          held: [],
          interrupted: [],
        });
      await killed(second);
      api.behave('charge', 'answer');
      api.behave('lookup', 'answer');
      const third = await startGate(where, 'c', hold);
      expect((await ask(third, { op: 'recover' })).recovery).toMatchObject({
        rerun: [],
        reconciling: [],
        held: [],
        interrupted: [],
      });
      expect(posts('/charges')).toHaveLength(1);
      expect(lookups()).toHaveLength(1);
      expect(await row(ledger, 'call_3')).toMatchObject({ status: 'executing' });

      expect((await ask(third, { op: 'resolve', id: 'call_3', outcome: 'not_executed' })).decision).toEqual({
        ok: true,
      });
      expect((await ask(third, { op: 'settled', id: 'call_3' })).record).toMatchObject({
        status: 'committed',
        attempt: 2,
      });
      await exits(third);
      expect(api.charges).toHaveLength(1);
      expect(posts('/charges').map((request) => request.key)).toEqual(['charge:o_3', 'charge:o_3']);
      expect(await ledger.verify()).toMatchObject({ ok: true });
    }, 90_000);

    it('a refund killed mid-run is never run twice: interrupted for a plain tool', async () => {
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      const first = await startGate(where, 'a', { TOOLGATE_KILL: 'refund' });
      expect(
        (await ask(first, { op: 'propose', id: 'call_4', order: 'o_4', amount_cents: 400 })).status,
      ).toBe('executing');
      expect((await ask(first, { op: 'settled', id: 'call_4' })).record).toMatchObject({
        status: 'committed',
      });
      first.send({ ref: 'c', op: 'compensate', id: 'call_4' });
      await first.line((message) => message.killed === 'refund');
      expect((await first.exited).signal).toBe('SIGKILL');

      const second = await startGate(where, 'b');
      expect((await ask(second, { op: 'settled', id: 'call_4:compensate' })).record).toMatchObject({
        status: 'failed',
        reason: { code: 'interrupted' },
        compensates: 'call_4',
      });
      await exits(second);
      const ledger = await store.open();
      expect(JSON.parse((await row(ledger, 'call_4')).record)).toMatchObject({
        status: 'committed',
        compensation: { id: 'call_4:compensate', status: 'failed', failure: { code: 'interrupted' } },
      });
      expect(posts('/refunds')).toEqual([]);
      expect(await ledger.verify()).toMatchObject({ ok: true });
    }, 60_000);

    it('a refund recorded, then SIGKILL: an idempotent tool refunds again with the same key, once', async () => {
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      const idempotent = { TOOLGATE_IDEMPOTENT: '1' };
      const first = await startGate(where, 'a', idempotent);
      await ask(first, { op: 'propose', id: 'call_5', order: 'o_5', amount_cents: 500 });
      expect((await ask(first, { op: 'settled', id: 'call_5' })).record).toMatchObject({
        status: 'committed',
      });
      api.behave('refund', 'record-then-hang', 1);
      first.send({ ref: 'c', op: 'compensate', id: 'call_5' });
      await expect.poll(() => api.refunds.length).toBe(1);
      await killed(first);

      const second = await startGate(where, 'b', idempotent);
      expect((await ask(second, { op: 'settled', id: 'call_5:compensate' })).record).toMatchObject({
        status: 'committed',
        output: { refund: 're_1', amount_cents: 500 },
      });
      await exits(second);
      const ledger = await store.open();
      expect(api.refunds).toHaveLength(1);
      expect(posts('/refunds').map((request) => request.key)).toEqual([
        'charge:o_5:compensate',
        'charge:o_5:compensate',
      ]);
      await expect
        .poll(async () => JSON.parse((await row(ledger, 'call_5')).record) as unknown)
        .toMatchObject({ compensation: { status: 'committed', output: { refund: 're_1' } } });
      expect(await ledger.verify()).toMatchObject({ ok: true });
    }, 60_000);

    it('two app servers recovering the same call at once: reconcile is asked by one at a time, once', async () => {
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      api.behave('charge', 'record-then-hang');
      // Leases long enough that no claim runs out while its holder is merely slow (a busy machine
      // can stall a process for hundreds of milliseconds): each takeover here is of a dead process.
      const lease = '2000';
      const first = await startGate(where, 'a', {}, lease);
      first.send({ ref: 'p', op: 'propose', id: 'call_6', order: 'o_6', amount_cents: 600 });
      await api.charged(1);
      await killed(first);
      // A slow lookup: two reconciles at once would overlap here.
      api.lookupDelayMs = 300;
      const [b, c] = await Promise.all([startGate(where, 'b', {}, lease), startGate(where, 'c', {}, lease)]);
      const [fromB, fromC] = await Promise.all([
        ask(b, { op: 'settled', id: 'call_6' }),
        ask(c, { op: 'settled', id: 'call_6' }),
      ]);
      expect(fromB.record).toMatchObject({ status: 'committed', evidence: { source: 'downstream' } });
      expect(fromC.record).toEqual(fromB.record);
      await Promise.all([exits(b), exits(c)]);
      expect(api.lookups.most).toBe(1);
      expect(lookups()).toHaveLength(1);
      expect(api.charges).toHaveLength(1);
      const ledger = await store.open();
      expect((await trail(ledger, 'call_6')).filter((event) => event.includes(':recovered'))).toHaveLength(1);
      expect(await ledger.verify()).toMatchObject({ ok: true });
    }, 60_000);
  },
  { shared: true },
);
