// PostgreSQL backends killed with pg_terminate_backend every 0–100 ms while calls are proposed:
// the process stays up, every proposal answers (a record, or a LedgerError to try again), and
// once the storm ends every call is settled (none left `executing`) and none ran twice.
import { setTimeout as delay } from 'node:timers/promises';
import { defineTool, isTerminal } from '@toolgate/core';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { createServerGate, LedgerError, postgresLedger, type Ledger } from '../../src/index.ts';
import { againWhileUnavailable } from '../support/again.ts';
import { describeLedgers, keep, postgresAdmin, withAdmin } from '../support/ledgers.ts';

const CALLS = 200;
const STORM_MS = 4000;

const crashes: unknown[] = [];
const crashed = (error: unknown) => crashes.push(error);
afterEach(() => {
  process.off('uncaughtException', crashed);
  crashes.length = 0;
});

/** Kills every backend of `database` but the killer's own, every 0–100 ms, until stopped. */
function storm(database: string): { readonly stop: () => Promise<number> } {
  let stopped = false;
  let kills = 0;
  const running = withAdmin(postgresAdmin!, async (admin) => {
    while (!stopped) {
      const { rowCount } = await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [database],
      );
      kills += rowCount ?? 0;
      await delay(Math.random() * 100);
    }
  });
  return {
    stop: async () => {
      stopped = true;
      await running;
      return kills;
    },
  };
}

describeLedgers(
  'PostgreSQL backends terminated over and over while calls are proposed',
  (target) => {
    for (const pooled of ['its own pool', 'the app’s pg.Pool'] as const) {
      it(`keeps the process up, answers every proposal with a record or a LedgerError, and settles every call after (${pooled})`, async () => {
        process.on('uncaughtException', crashed);
        const store = await target.fresh();
        const database = new URL(store.location).pathname.slice(1);
        const appPool =
          pooled === 'its own pool' ? undefined : new pg.Pool({ connectionString: store.location, max: 10 });
        appPool?.on('error', () => undefined);
        const ledger: Ledger =
          appPool === undefined
            ? await store.open({ onError: () => undefined })
            : keep(await postgresLedger({ pool: appPool, onError: () => undefined }));
        const runs = new Map<string, number>();
        const work = defineTool({
          name: 'work',
          inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
          execute: async (_input, { call }) => {
            runs.set(call.id, (runs.get(call.id) ?? 0) + 1);
            await delay(Math.random() * 20);
            return { ok: true };
          },
        });
        const gate = createServerGate({ tools: [work], ledger, leaseMs: 1500, onError: () => undefined });
        const proposal = (i: number) => ({ id: `c${i}`, name: 'work', arguments: { n: i } });
        const killer = storm(database);
        const answers = await Promise.allSettled(
          Array.from({ length: CALLS }, async (_, i) => {
            await delay(Math.random() * STORM_MS * 0.8);
            return gate.propose(proposal(i), { session: `s${i % 10}`, principal: 'alice' });
          }),
        );
        const kills = await killer.stop();
        expect(kills).toBeGreaterThan(0);
        expect(crashes).toEqual([]);
        // Every proposal answered: a record, or the ledger's own error (nothing half-done; propose again).
        for (const answer of answers) {
          if (answer.status === 'rejected') expect(answer.reason).toBeInstanceOf(LedgerError);
        }
        // After the storm, each call proposed again reaches its end: none is left `executing`. A
        // backend killed in the storm's last round may still be on its way out as a pooled
        // connection, and the first query on it fails: that is a LedgerError, and the caller tries
        // again, as the contract says.
        const settled = await Promise.all(
          Array.from({ length: CALLS }, async (_, i) => {
            await againWhileUnavailable(
              () => gate.propose(proposal(i), { session: `s${i % 10}`, principal: 'alice' }),
              { tries: 5, pauseMs: 50 },
            );
            return gate.settled(`c${i}`);
          }),
        );
        expect(
          settled.filter((call) => call === undefined || !isTerminal(call.status)).map((call) => call?.id),
        ).toEqual([]);
        expect(settled.filter((call) => call?.status === 'committed')).not.toHaveLength(0);
        expect([...runs.values()].filter((count) => count > 1)).toEqual([]);
        expect(
          await ledger.db
            .selectFrom('toolgate_calls')
            .select('id')
            .where('status', '=', 'executing')
            .execute(),
        ).toEqual([]);
        expect(await ledger.verify()).toMatchObject({ ok: true });
        await gate.close();
        await ledger.close();
        await appPool?.end();
      }, 90_000);
    }
  },
  { dialects: ['postgres'] },
);
