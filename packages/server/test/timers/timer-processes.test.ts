/** Reminders, escalations and expiry across app servers in processes of their own, one killed with SIGKILL while they are due. */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import type { Ledger } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';
import { compile, type Child } from '../support/processes.ts';

let refs = 0;
async function ask(to: Child, message: Record<string, unknown>): Promise<Record<string, unknown>> {
  const ref = (refs += 1);
  const answered = to.line((line) => line.ref === ref);
  to.send({ ...message, ref });
  const answer = await answered;
  if ('error' in answer) throw new Error(String(answer.error));
  return answer;
}

/** What the timers did to w1, and how their rows ended. */
async function fired(ledger: Ledger) {
  const events = (await ledger.eventsAfter(0)).filter(
    (event) => event.callId === 'w1' && event.actor === 'toolgate:timers',
  );
  const rows = await ledger.db
    .selectFrom('toolgate_timers')
    .select(['kind', 'outcome', 'due_at'])
    .where('call_id', '=', 'w1')
    .orderBy('due_at')
    .execute();
  return { events, rows };
}

const LEASE_MS = 1000;
/** Long enough that the held delivery (given half a lease) is still held when its server is killed, on a busy machine too. */
const HOLDING_LEASE_MS = 4000;

describeLedgers(
  'approval timers in app servers of their own',
  (target) => {
    it('a server killed while its reminder, escalation and expiry are due: restarted, each fires once', async () => {
      const program = await compile('timer-app');
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      const first = program.start([where, 'A', 'hang', String(LEASE_MS)]);
      let again: Child | undefined;
      try {
        await first.line((line) => line.ready === true);
        expect(await ask(first, { op: 'propose', id: 'w1' })).toMatchObject({
          record: { status: 'awaiting_approval', approval: { asked: ['manager_1'] } },
        });
        // It holds the escalation's claim, asking who to escalate to, when it dies.
        await first.line((line) => line.escalating === 'A');
        first.kill('SIGKILL');
        expect((await first.exited).signal).toBe('SIGKILL');

        again = program.start([where, 'A', 'answer', String(LEASE_MS)]);
        await again.line((line) => line.ready === true);
        expect(await ask(again, { op: 'settled', id: 'w1' })).toMatchObject({
          record: {
            status: 'cancelled',
            reason: { code: 'approval_expired' },
            approval: { asked: ['manager_1', 'director_1'] },
          },
        });
        const ledger = await store.open();
        const { events, rows } = await fired(ledger);
        expect(events.map((event) => event.reason?.code).sort()).toEqual([
          'approval_expired',
          'escalated',
          'reminded',
        ]);
        expect(rows.map((row) => [row.kind, row.outcome])).toEqual([
          ['escalation', 'fired'],
          ['reminder', 'fired'],
          ['expiry', 'fired'],
        ]);
        // The dead server's claim held the escalation back one lease, and no longer.
        const escalated = events.find((event) => event.reason?.code === 'escalated');
        const due = rows[0]?.due_at as number;
        expect(escalated?.at).toBeGreaterThanOrEqual(due + LEASE_MS);
        expect(escalated?.at).toBeLessThan(due + 3 * LEASE_MS);
        expect(again.lines.filter((line) => 'error' in line)).toEqual([]);
        expect(await ledger.verify()).toMatchObject({ ok: true });
      } finally {
        again?.send({ op: 'exit' });
        await again?.exited;
      }
    }, 90_000);

    it('a server killed while its channel holds a notice: restarted, the notice goes out again with the same id, once its claim ran out', async () => {
      const arrived: { id: string; kind: string; to: string; by: string }[] = [];
      const held: ServerResponse[] = [];
      let first: () => void = () => undefined;
      const reached = new Promise<void>((resolve) => (first = resolve));
      const hook = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          const notice = JSON.parse(body) as { kind: string; to: string; by: string };
          arrived.push({ id: String(request.headers['notice-id']), ...notice });
          // The first notice is held: its server dies holding the claim.
          if (arrived.length === 1) {
            held.push(response);
            first();
          } else response.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
      const program = await compile('timer-app');
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      const killed = program.start([where, 'A', 'answer', String(HOLDING_LEASE_MS), url]);
      let again: Child | undefined;
      try {
        await killed.line((line) => line.ready === true);
        await ask(killed, { op: 'propose', id: 'w1' });
        await reached;
        killed.kill('SIGKILL');
        await killed.exited;
        again = program.start([where, 'B', 'answer', String(HOLDING_LEASE_MS), url]);
        await again.line((line) => line.ready === true);
        await ask(again, { op: 'settled', id: 'w1' });
        const ledger = await store.open();
        const asked = arrived[0] as (typeof arrived)[number];
        expect(asked).toMatchObject({ kind: 'asked', to: 'manager_1', by: 'A' });
        // Until the end of the call's wait, every later notice too (expired last) has gone out.
        const ended = () => arrived.filter((notice) => notice.kind === 'expired').length === 2;
        for (let tries = 0; tries < 100 && !ended(); tries += 1)
          await new Promise((resolve) => setTimeout(resolve, 50));
        expect(arrived.filter((notice) => notice.id === asked.id).map((notice) => notice.by)).toEqual([
          'A',
          'B',
        ]);
        // Each principal's notices in order: the one held goes out again before any later one to them.
        const to = (principal: string) =>
          arrived
            .filter((notice) => notice.to === principal)
            .map((notice) => `${notice.kind} by ${notice.by}`);
        expect(to('manager_1')).toEqual(['asked by A', 'asked by B', 'reminder by B', 'expired by B']);
        expect(to('director_1')).toEqual(['escalated by B', 'reminder by B', 'expired by B']);
        // A delivery is recorded after it is taken (with the server's next write, or on its own).
        const recorded = async () =>
          (await ledger.eventsAfter(0)).filter((event) => event.reason?.message.includes(asked.id));
        for (let tries = 0; tries < 100 && (await recorded()).length === 0; tries += 1)
          await new Promise((resolve) => setTimeout(resolve, 50));
        const events = await recorded();
        expect(events.map((event) => event.reason?.code)).toEqual(['notice_delivered']);
        expect(again.lines.filter((line) => 'error' in line)).toEqual([]);
      } finally {
        again?.send({ op: 'exit' });
        await again?.exited;
        for (const response of held) response.destroy();
        hook.closeAllConnections();
        await new Promise((resolve) => hook.close(resolve));
      }
    }, 90_000);

    it('two servers running at once: each timer fires once', async () => {
      const program = await compile('timer-app');
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      const servers = [
        program.start([where, 'A', 'answer', String(LEASE_MS)]),
        program.start([where, 'B', 'answer', String(LEASE_MS)]),
      ] as const;
      try {
        await Promise.all(servers.map((server) => server.line((line) => line.ready === true)));
        await ask(servers[0], { op: 'propose', id: 'w1' });
        for (const server of servers)
          expect(await ask(server, { op: 'settled', id: 'w1' })).toMatchObject({
            record: { status: 'cancelled', reason: { code: 'approval_expired' } },
          });
        const { events, rows } = await fired(await store.open());
        expect(events.map((event) => event.reason?.code)).toEqual([
          'escalated',
          'reminded',
          'approval_expired',
        ]);
        expect(rows.map((row) => row.outcome)).toEqual(['fired', 'fired', 'fired']);
        expect(servers.flatMap((server) => server.lines.filter((line) => 'escalating' in line))).toHaveLength(
          1,
        );
        expect(servers.flatMap((server) => server.lines.filter((line) => 'error' in line))).toEqual([]);
      } finally {
        for (const server of servers) server.send({ op: 'exit' });
        await Promise.all(servers.map((server) => server.exited));
      }
    }, 90_000);
  },
  { shared: true },
);
