import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { isTerminal } from '@toolgate/core';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createServerGate, type Ledger } from '../src/index.ts';
import {
  createAppTable,
  crashTools,
  KILL_POINTS,
  KINDS,
  LEASE_MS,
  pointsOf,
  type AppDatabase,
  type Kind,
  type KillPoint,
} from './support/crash-app.ts';
import { openEffects, type EffectRow } from './support/effects.ts';
import { describeLedgers, scratchDirectory } from './support/ledgers.ts';
import { compile } from './support/processes.ts';

// App servers in processes of their own, killed with SIGKILL at each step of a call and at random
// instants, over and over, each restart proposing its calls again and recovering what the dead
// left running. Afterwards the database and the effects file are read, not the processes' words:
// no tool that is not idempotent ran twice, a re-run used the call's own key, a transactional
// tool's rows exist exactly when its call committed, the audit chain holds and no call is open.

/** Calls each generation of the app server starts (and proposes again in the next). */
const CALLS = 8;
const KILLS = 100;

type Plan =
  | { readonly at: 'point'; readonly point: KillPoint; readonly tool: Kind; readonly nth: number }
  | { readonly at: 'random'; readonly afterMs: number };

interface Kill {
  readonly at: KillPoint | 'random';
  /** The kind of tool whose call reached the kill point. */
  readonly tool?: Kind;
  /** The kinds of tool whose calls the kill left running. */
  readonly cut: readonly string[];
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/** Twice each point of each tool, at its first or its second call there, and forty kills at random instants. */
function plans(): Plan[] {
  const targeted = KINDS.flatMap((tool) =>
    pointsOf(tool).flatMap((point) => [1, 2].map((nth): Plan => ({ at: 'point', point, tool, nth }))),
  );
  const random = Array.from({ length: 40 }, (): Plan => ({ at: 'random', afterMs: Math.random() * 500 }));
  return shuffle([...targeted, ...random]);
}

async function openCalls(ledger: Ledger, instance: string): Promise<string[]> {
  const rows = await ledger.db
    .selectFrom('toolgate_calls')
    .select('tool')
    .where('status', '=', 'executing')
    .where('lease_owner', '=', instance)
    .execute();
  return rows.map((row) => row.tool);
}

describeLedgers(
  'app servers killed with SIGKILL at any point of a call',
  (target) => {
    it(`never run a side effect twice, keep transactional rows with their calls, and leave no call open (${KILLS}+ kills)`, async () => {
      const program = await compile('crashing-gate');
      const store = await target.fresh();
      const ledger = await store.open();
      await createAppTable(ledger);
      const effectsPath = join(scratchDirectory(), `effects-${randomBytes(6).toString('hex')}.db`);
      const where = `${target.dialect}:${store.location}`;

      // Two app servers at a time, each killed again and again: each one's recovery also takes
      // over the calls the other one left running.
      const kills: Kill[] = [];
      const queue = plans();
      const lane = async (name: string) => {
        for (
          let generation = 1;
          queue.length > 0 || (kills.length < KILLS && generation < 200);
          generation += 1
        ) {
          const plan = queue.shift() ?? { at: 'random', afterMs: Math.random() * 500 };
          const args = [where, effectsPath, name, String(generation), String(CALLS)];
          const child = program.start(
            args,
            plan.at === 'point' ? { env: { TOOLGATE_KILL: `${plan.point}:${plan.tool}:${plan.nth}` } } : {},
          );
          if (plan.at === 'random') {
            await child.line((message) => message.ready === true).catch(() => undefined);
            await delay(plan.afterMs);
            child.kill('SIGKILL');
          }
          const exit = await child.exited;
          if (exit.signal !== 'SIGKILL') {
            // Not killed: it must have finished its calls and closed cleanly.
            expect(exit.code, exit.stderr).toBe(0);
            continue;
          }
          const said = child.lines.find((message) => 'killed' in message);
          expect(
            plan.at === 'random' || said !== undefined,
            `${name}g${generation} died without reaching its kill point:\n${exit.stderr}`,
          ).toBe(true);
          const cut = await openCalls(ledger, `${name}g${generation}`);
          kills.push(plan.at === 'point' ? { at: plan.point, tool: plan.tool, cut } : { at: 'random', cut });
        }
      };
      await Promise.all([lane('a'), lane('b')]);

      // The last restart: every lease a killed process held runs out, and recovery settles its
      // calls. A re-run whose result could not be written in time is let go (its lease runs out
      // in turn) and settled by the next recovery, as the gate promises: a few rounds at most.
      const effects = openEffects(effectsPath);
      const gate = createServerGate({
        tools: crashTools(effects, () => undefined),
        ledger,
        leaseMs: LEASE_MS,
        recover: false,
      });
      const recovery = { rerun: [] as string[], interrupted: [] as string[], rounds: 0 };
      for (; recovery.rounds < 3; recovery.rounds += 1) {
        const { last } = await ledger.db
          .selectFrom('toolgate_calls')
          .select((eb) => eb.fn.max('lease_expires_at').as('last'))
          .where('status', 'in', ['pending', 'validated', 'executing'])
          .executeTakeFirstOrThrow();
        if (last === null) break;
        // A timer may fire a few milliseconds early by the wall clock the leases are written in.
        while (Date.now() <= Number(last)) await delay(Number(last) - Date.now() + 1);
        const round = await gate.recover();
        // A re-run let go is not settled here: its lease runs out, and the next round takes it.
        await Promise.all(round.rerun.map((id) => Promise.race([gate.settled(id), delay(20 * LEASE_MS)])));
        recovery.rerun.push(...round.rerun);
        recovery.interrupted.push(...round.interrupted);
      }

      const calls = await ledger.db.selectFrom('toolgate_calls').selectAll().orderBy('created_at').execute();
      const { rows: written } = await sql<
        AppDatabase['app_effects']
      >`select call_id, idempotency_key from app_effects`.execute(ledger.db);
      const outside = effects.rows();
      effects.close();
      await gate.close();

      expect(await gate.verify()).toMatchObject({ ok: true });
      // No call is left open: each has ended, or waits for a person. An open one is shown with
      // its lease and the moves the ledger has of it, to tell who left it so.
      const open = calls.filter((call) => !isTerminal(call.status) && call.status !== 'awaiting_approval');
      const trail = await ledger.eventsAfter(0, { limit: 1_000_000 });
      const recovered = new Set([...recovery.rerun, ...recovery.interrupted]);
      expect(
        open.map((call) => {
          const moves = trail
            .filter((event) => event.callId === call.id)
            .map((event) => `${event.from ?? 'null'}>${event.to}@${event.actor}`);
          return `${call.id}: ${call.status}, lease ${String(call.lease_owner)} until ${String(call.lease_expires_at)} fence ${call.fence}, ${recovered.has(call.id) ? 'recovered at the end' : 'not recovered at the end'} (${recovery.rounds} rounds); ${moves.join(', ')}`;
        }),
      ).toEqual([]);

      const byCall = new Map<string, EffectRow[]>();
      for (const row of outside) byCall.set(row.call_id, [...(byCall.get(row.call_id) ?? []), row]);
      const known = new Map(calls.map((call) => [call.id, call]));
      // No effect without a claim written before it.
      expect(outside.filter((row) => !known.has(row.call_id))).toEqual([]);
      const problems: string[] = [];
      for (const call of calls) {
        const runs = byCall.get(call.id) ?? [];
        const rows = written.filter((row) => row.call_id === call.id);
        const keys = [...new Set([...runs, ...rows].map((row) => row.idempotency_key))];
        if (keys.some((key) => key !== call.idempotency_key))
          problems.push(
            `${call.id} (${call.tool}) ran with keys ${keys.join(', ')}, not its own ${call.idempotency_key}`,
          );
        if (call.tool === 'plain' || call.tool === 'approved') {
          if (runs.length > 1)
            problems.push(`${call.id} (${call.tool}, not idempotent) ran ${runs.length} times`);
          if (call.status === 'committed' && runs.length !== 1)
            problems.push(`${call.id} (${call.tool}) committed after ${runs.length} runs`);
        }
        if (call.tool === 'idempotent' && call.status === 'committed' && runs.length === 0)
          problems.push(`${call.id} (idempotent) committed without running`);
        if (call.tool === 'transactional') {
          if (runs.length > 0) problems.push(`${call.id} (transactional) wrote outside its transaction`);
          if (rows.length !== (call.status === 'committed' ? 1 : 0))
            problems.push(`${call.id} (transactional) is ${call.status} with ${rows.length} rows`);
        }
        // A call that ran and was cut off says so: it may or may not have taken effect.
        if (call.status === 'failed' && runs.length > 0) {
          const reason = JSON.parse(call.reason ?? '{}') as { code?: string };
          if (reason.code !== 'interrupted')
            problems.push(`${call.id} (${call.tool}) ran and then failed with ${String(reason.code)}`);
        }
      }
      expect(problems).toEqual([]);

      // The kills reached every point and cut every kind of tool, and recovery did all it can do.
      expect(kills.length).toBeGreaterThanOrEqual(KILLS);
      const points = new Set(kills.map((kill) => kill.at));
      expect(KINDS.flatMap(pointsOf).filter((point) => point !== 'reclaim' && !points.has(point))).toEqual(
        [],
      );
      const hit = (kind: Kind) =>
        kills.filter((kill) => kill.tool === kind || kill.cut.includes(kind)).length;
      for (const kind of KINDS)
        expect(hit(kind), `kills in the middle of a ${kind} call`).toBeGreaterThanOrEqual(15);
      const ran = (tool: Kind, times: (n: number) => boolean) =>
        calls.filter((call) => call.tool === tool && times((byCall.get(call.id) ?? []).length));
      expect(
        ran('idempotent', (n) => n > 1).length,
        'idempotent calls run again with their key',
      ).toBeGreaterThan(0);
      expect(
        calls.filter(
          (call) =>
            call.tool === 'plain' && call.status === 'failed' && (byCall.get(call.id) ?? []).length === 1,
        ).length,
        'plain calls cut after their effect',
      ).toBeGreaterThan(0);
      const rerun = await ledger.db
        .selectFrom('toolgate_events')
        .select('call_id')
        .where('to_status', '=', 'executing')
        .where('from_status', '=', 'executing')
        .execute();
      expect(
        rerun.filter((event) => known.get(event.call_id)?.tool === 'transactional').length,
        'transactional calls run again',
      ).toBeGreaterThan(0);

      const at = (point: KillPoint | 'random') =>
        `${point} ${kills.filter((kill) => kill.at === point).length}`;
      console.info(
        `${target.name}: ${kills.length} kills (${[...KILL_POINTS, 'random' as const].map(at).join(', ')}); kills in the middle of a call: ${KINDS.map((kind) => `${kind} ${hit(kind)}`).join(', ')}; ${calls.length} calls, ${outside.length} effects, ${written.length} transactional rows; the last restart settled them in ${recovery.rounds} recoveries`,
      );
    }, 300_000);
  },
  { shared: true },
);
