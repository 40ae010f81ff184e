import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { inputHash, isTerminal } from '@toolgate/core';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createAppTable, type AppDatabase } from './support/crash-app.ts';
import { openEffects } from './support/effects.ts';
import { describeLedgers, scratchDirectory } from './support/ledgers.ts';
import { compile, type Child } from './support/processes.ts';

const IDS = 500;
const PROPOSALS = 2000;
const SESSIONS = ['s0', 's1', 's2', 's3', 's4'];
// Tools that never run twice on their own: a second run of any call would be this test's finding.
const TOOLS = ['plain', 'transactional', 'approved'] as const;

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/** Requests each server has in hand at once. */
const IN_FLIGHT = 32;

interface Request {
  readonly ref: number;
  readonly to: Child;
  readonly message: Record<string, unknown>;
}

type Answer = Record<string, unknown> & { readonly request: Request };

/** What a server says at the end: the events it committed, and those its live feeds delivered. */
interface Report {
  readonly appended: number[];
  readonly seen: number[];
  readonly feedErrors: unknown;
}

describeLedgers(
  'two app servers in processes of their own on one PostgreSQL',
  (target) => {
    it(`answer ${PROPOSALS} proposals of ${IDS} call ids sent to both, run each id at most once, and see each other's events live`, async () => {
      const program = await compile('gate-instance');
      const store = await target.fresh();
      const ledger = await store.open();
      await createAppTable(ledger);
      const effectsPath = join(scratchDirectory(), `effects-${randomBytes(6).toString('hex')}.db`);
      const where = `${target.dialect}:${store.location}`;
      const servers = [
        program.start([where, effectsPath, 'A', ...SESSIONS]),
        program.start([where, effectsPath, 'B', ...SESSIONS]),
      ] as const;
      await Promise.all(servers.map((server) => server.line((message) => message.ready === true)));

      // Like an HTTP server, each takes a bounded number of requests at a time; the rest wait
      // their turn, in the order they were sent.
      let refs = 0;
      const unanswered = new Map<number, Request>();
      const inFlight = new Map<Child, number>();
      const turns = new Map<Child, (() => void)[]>();
      const pending: Promise<Answer>[] = [];
      const send = async (to: Child, message: Record<string, unknown>): Promise<Answer> => {
        while ((inFlight.get(to) ?? 0) >= IN_FLIGHT)
          await new Promise<void>((resolve) => turns.set(to, [...(turns.get(to) ?? []), resolve]));
        inFlight.set(to, (inFlight.get(to) ?? 0) + 1);
        const request: Request = { ref: (refs += 1), to, message };
        const answered = to
          .line((line) => line.ref === request.ref)
          .then((line) => {
            inFlight.set(to, (inFlight.get(to) ?? 0) - 1);
            turns.get(to)?.shift()?.();
            return { ...line, request };
          });
        to.send({ ...message, ref: request.ref });
        unanswered.set(request.ref, request);
        void answered.then(() => unanswered.delete(request.ref));
        pending.push(answered);
        return answered;
      };

      // Each id goes to both servers twice, in a random order; one id in twenty once with other
      // arguments (it must be refused, or be the call the others are refused for); one in five is
      // cancelled on either server at a random moment. Calls that wait for a person are approved
      // on both servers at once.
      const stream: { to: Child; message: Record<string, unknown> }[] = [];
      for (let i = 0; i < IDS; i += 1) {
        const tool = TOOLS[i % TOOLS.length] ?? 'plain';
        const base = { op: 'propose', id: `call_${i}`, tool, session: SESSIONS[i % SESSIONS.length] };
        const other = i % 20 === 7 ? Math.floor(Math.random() * 4) : -1;
        const targets = shuffle([servers[0], servers[1], servers[0], servers[1]]);
        targets.forEach((to, copy) =>
          stream.push({
            to,
            message: { ...base, arguments: JSON.stringify({ n: copy === other ? i + 100_000 : i }) },
          }),
        );
        if (i % 5 === 2)
          stream.push({
            to: servers[Math.floor(Math.random() * 2)] ?? servers[0],
            message: { op: 'cancel', id: `call_${i}` },
          });
      }
      shuffle(stream);
      const approvals: Promise<Answer>[] = [];
      const approving = new Set<string>();
      const sent: Promise<Answer>[] = [];
      for (const { to, message } of stream) {
        const answered = send(to, message);
        sent.push(answered);
        if (message.tool === 'approved') {
          sent.push(
            answered.then(async (answer) => {
              if (answer.status === 'awaiting_approval' && !approving.has(String(message.id))) {
                approving.add(String(message.id));
                const hash = await inputHash(answer.input);
                for (const server of servers)
                  approvals.push(send(server, { op: 'approve', id: message.id, inputHash: hash }));
              }
              return answer;
            }),
          );
        }
      }
      // A request that is never answered is what this test looks for: wait a good while for the
      // answers, then name those that are missing rather than time out.
      const stop = new AbortController();
      await Promise.race([
        Promise.all(sent).then(() => Promise.all(approvals)),
        delay(120_000, undefined, { signal: stop.signal }).catch(() => undefined),
      ]);
      stop.abort();
      expect(
        [...unanswered.values()].map(({ to, message }) => ({
          to: to === servers[0] ? 'A' : 'B',
          ...message,
        })),
      ).toEqual([]);
      const answers = await Promise.all(pending);

      // Every proposal, cancel and approval was answered, none with an error.
      const proposals = answers.filter((answer) => answer.request.message.op === 'propose');
      expect(proposals).toHaveLength(PROPOSALS);
      expect(
        answers
          .filter((answer) => 'error' in answer)
          .map((answer) => ({ ...answer.request.message, error: answer.error })),
      ).toEqual([]);

      // The calls still running end; then every call has ended, or waits for a person.
      const open = await ledger.db
        .selectFrom('toolgate_calls')
        .select('id')
        .where('status', 'in', ['pending', 'validated', 'executing'])
        .execute();
      await Promise.all(open.map(({ id }) => send(servers[0], { op: 'settled', id })));
      const calls = await ledger.db.selectFrom('toolgate_calls').selectAll().execute();
      expect(calls).toHaveLength(IDS);
      expect(
        calls
          .filter((call) => !isTerminal(call.status) && call.status !== 'awaiting_approval')
          .map((call) => `${call.id}: ${call.status}`),
      ).toEqual([]);

      // The same id with the same arguments answers the same call; with other arguments, id_conflict.
      const problems: string[] = [];
      for (const call of calls) {
        const mine = proposals.filter((answer) => answer.request.message.id === call.id);
        const answeredWith = new Set(
          mine
            .filter((answer) => answer.reason !== 'id_conflict')
            .map((answer) => answer.request.message.arguments),
        );
        const refusedFor = new Set(
          mine
            .filter((answer) => answer.reason === 'id_conflict')
            .map((answer) => answer.request.message.arguments),
        );
        if (answeredWith.size !== 1 || [...refusedFor].some((args) => answeredWith.has(args))) {
          problems.push(
            `${call.id}: answered for ${[...answeredWith].join(' and ')}, refused for ${[...refusedFor].join(' and ')}`,
          );
        }
      }
      expect(problems).toEqual([]);
      expect(proposals.filter((answer) => answer.reason === 'id_conflict').length).toBeGreaterThanOrEqual(
        IDS / 20,
      );

      // Each id ran at most once: one claim, one effect (or one row written in its transaction).
      const claims = await ledger.db
        .selectFrom('toolgate_events')
        .select(['call_id', (eb) => eb.fn.countAll<number>().as('claims')])
        .where('to_status', '=', 'executing')
        .where('from_status', '!=', 'executing')
        .groupBy('call_id')
        .having((eb) => eb.fn.countAll(), '>', 1)
        .execute();
      expect(claims).toEqual([]);
      const effects = openEffects(effectsPath);
      const outside = effects.rows();
      effects.close();
      const { rows: written } = await sql<
        AppDatabase['app_effects']
      >`select call_id, idempotency_key from app_effects`.execute(ledger.db);
      const counts = new Map<string, number>();
      for (const row of [...outside, ...written]) counts.set(row.call_id, (counts.get(row.call_id) ?? 0) + 1);
      expect([...counts].filter(([, count]) => count > 1)).toEqual([]);
      const committed = calls.filter((call) => call.status === 'committed');
      expect(committed.filter((call) => counts.get(call.id) !== 1).map((call) => call.id)).toEqual([]);
      expect(
        calls
          .filter(
            (call) => call.tool === 'transactional' && call.status !== 'committed' && counts.has(call.id),
          )
          .map((call) => call.id),
      ).toEqual([]);
      expect(committed.length).toBeGreaterThan(IDS / 2);
      // An approval is taken once, whichever server it reached first; a cancel may come first.
      const approved = (await Promise.all(approvals)).filter(
        (answer) => (answer.decision as { ok?: boolean }).ok === true,
      );
      expect(approved.length).toBe(new Set(approved.map((answer) => answer.request.message.id)).size);
      expect(approved.length).toBeGreaterThan(0);
      expect(
        calls.filter(
          (call) => call.status === 'cancelled' && call.reason?.includes('user_cancelled') === true,
        ).length,
      ).toBeGreaterThan(0);
      expect(await ledger.verify()).toMatchObject({ ok: true });

      // What one server committed, the other saw on its live feed (opened before the first call),
      // and the reverse: each saw every event of the ledger, once.
      const all = (await ledger.eventsAfter(0, { limit: 1_000_000 })).map((event) => event.seq);
      const [a, b] = (await Promise.all(servers.map((server) => send(server, { op: 'report' })))).map(
        (report) => ({
          appended: report.appended as number[],
          seen: report.seen as number[],
          feedErrors: report.feedErrors,
        }),
      ) as [Report, Report];
      expect([a.feedErrors, b.feedErrors]).toEqual([[], []]);
      expect(a.appended.length).toBeGreaterThan(0);
      expect(b.appended.length).toBeGreaterThan(0);
      expect(a.appended.filter((seq) => !b.seen.includes(seq))).toEqual([]);
      expect(b.appended.filter((seq) => !a.seen.includes(seq))).toEqual([]);
      expect([...a.appended, ...b.appended].sort((x, y) => x - y)).toEqual(all);
      expect([...a.seen].sort((x, y) => x - y)).toEqual(all);
      expect([...b.seen].sort((x, y) => x - y)).toEqual(all);

      for (const server of servers) server.send({ op: 'exit' });
      for (const exit of await Promise.all(servers.map((server) => server.exited)))
        expect(exit.code, exit.stderr).toBe(0);
    }, 180_000);
  },
  { dialects: ['postgres'] },
);
