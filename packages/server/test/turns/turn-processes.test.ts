/** `onTurnSettled` across app servers in processes of their own, one killed with SIGKILL in the middle of its handler. */
import { expect, it } from 'vitest';
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

const handling = (server: Child) => server.lines.filter((line) => 'handling' in line);

describeLedgers(
  'onTurnSettled on two app servers in processes of their own',
  (target) => {
    it('runs exactly once in all when the last call is approved through the second server', async () => {
      const program = await compile('turn-app');
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      const servers = [
        program.start([where, 'A', 'resolve']),
        program.start([where, 'B', 'resolve']),
      ] as const;
      const [a, b] = servers;
      try {
        await Promise.all(servers.map((server) => server.line((line) => line.ready === true)));
        expect(
          await ask(a, {
            op: 'read',
            session: 'chat_1',
            turn: 'turn_1',
            calls: [
              { id: 'call_1', amount: 2000 },
              { id: 'call_2', amount: 3000 },
            ],
          }),
        ).toMatchObject({
          stopped: ['awaiting_approval', 'awaiting_approval'],
        });
        expect(await ask(a, { op: 'approve', id: 'call_1' })).toMatchObject({ decision: { ok: true } });
        const handled = Promise.race(
          servers.map((server) => server.line((line) => line.handled === 'turn_1')),
        );
        expect(await ask(b, { op: 'approve', id: 'call_2' })).toMatchObject({ decision: { ok: true } });
        await handled;
        // Both sweep for a while: nobody runs it again.
        await Promise.all(servers.map((server) => ask(server, { op: 'watch', ms: 1000 })));
        const runs = [...handling(a), ...handling(b)];
        expect(runs).toHaveLength(1);
        expect(runs[0]).toMatchObject({
          handling: 'turn_1',
          session: 'chat_1',
          attempt: 1,
          calls: ['committed', 'committed'],
        });
        const ledger = await store.open();
        const row = await ledger.db
          .selectFrom('toolgate_turns')
          .selectAll()
          .where('id', '=', 'turn_1')
          .executeTakeFirstOrThrow();
        expect(row).toMatchObject({ attempts: 1, lease_owner: null, done_at: expect.any(Number) });
        expect(servers.flatMap((server) => server.lines.filter((line) => 'error' in line))).toEqual([]);
      } finally {
        for (const server of servers) server.send({ op: 'exit' });
        await Promise.all(servers.map((server) => server.exited));
      }
    }, 90_000);

    it('a server killed in the middle of its handler: the other runs the turn again, with the same id, only once the first is gone', async () => {
      const program = await compile('turn-app');
      const store = await target.fresh();
      const where = `${target.dialect}:${store.location}`;
      const leaseMs = 1500;
      const a = program.start([where, 'A', 'hang', String(leaseMs)]);
      let b: Child | undefined;
      try {
        await a.line((line) => line.ready === true);
        const started = a.line((line) => line.handling === 'turn_2');
        expect(
          await ask(a, {
            op: 'read',
            session: 'chat_2',
            turn: 'turn_2',
            calls: [{ id: 'call_3', amount: 5 }],
          }),
        ).toMatchObject({ stopped: ['committed'] });
        expect(await started).toMatchObject({ attempt: 1, by: 'A' });

        // The second server starts while the first still runs the handler, and sweeps for two leases' time: it leaves the turn alone.
        b = program.start([where, 'B', 'resolve', String(leaseMs)]);
        await b.line((line) => line.ready === true);
        await ask(b, { op: 'watch', ms: 2 * leaseMs });
        expect(handling(b)).toEqual([]);

        a.kill('SIGKILL');
        expect(await a.exited).toMatchObject({ signal: 'SIGKILL' });
        const taken = await b.line((line) => line.handled === 'turn_2');
        expect(taken).toMatchObject({ by: 'B' });
        expect(handling(b)).toEqual([
          expect.objectContaining({
            handling: 'turn_2',
            session: 'chat_2',
            attempt: 2,
            calls: ['committed'],
          }),
        ]);
        expect(handling(a)).toHaveLength(1);
        const ledger = await store.open();
        const row = await ledger.db
          .selectFrom('toolgate_turns')
          .selectAll()
          .where('id', '=', 'turn_2')
          .executeTakeFirstOrThrow();
        expect(row).toMatchObject({ attempts: 2, fence: 2, done_at: expect.any(Number) });
      } finally {
        a.kill('SIGKILL');
        if (b !== undefined) {
          b.send({ op: 'exit' });
          await b.exited;
        }
      }
    }, 90_000);
  },
  { shared: true, dialects: ['postgres'] },
);
