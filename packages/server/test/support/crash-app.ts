import { setTimeout as delay } from 'node:timers/promises';
import { ajvJsonSchema } from '@toolgate/core/kit';
import { defineTool, type JsonSchemaCompiler, type ToolDefinition } from '@toolgate/core';
import { sql } from 'kysely';
import {
  postgresLedger,
  sqliteLedger,
  transactionOf,
  type Ledger,
  type NewLedgerEvent,
} from '../../src/index.ts';
import type { Effects } from './effects.ts';

// An app whose server is killed at every step of a call. Its tools' effects land where the test
// can count them afterwards: in the effects file (outside the ledger), or, for the transactional
// tool, in an app table of the ledger's own database, written through the call's transaction.

/** The kinds of tool, one tool each: what recovery may do with a call of that kind differs. */
export const KINDS = ['plain', 'idempotent', 'transactional', 'approved'] as const;
export type Kind = (typeof KINDS)[number];

/**
 * Where a process can be killed, in the order a call meets them: in its validator or `authorize`;
 * inside the transaction that claims the call (`claim`; for an approved call, the approval's) or
 * right after it commits (`claimed`); as the tool starts (`execute`); after its effect (`effect`),
 * or for the transactional tool after its write (`written`); inside the transaction of the
 * `committed` move (`commit`) or right after it (`committed`); inside a recovery's claim of a call
 * it runs again (`reclaim`).
 */
export const KILL_POINTS = [
  'validate',
  'authorize',
  'claim',
  'claimed',
  'execute',
  'effect',
  'written',
  'commit',
  'committed',
  'reclaim',
] as const;
export type KillPoint = (typeof KILL_POINTS)[number];

/** Which points each kind of tool passes. */
export function pointsOf(kind: Kind): readonly KillPoint[] {
  return KILL_POINTS.filter((point) => {
    if (point === 'effect') return kind !== 'transactional';
    if (point === 'written') return kind === 'transactional';
    if (point === 'reclaim') return kind === 'idempotent' || kind === 'transactional';
    return true;
  });
}

/** The app's own table in the ledger's database, written by the transactional tool. */
export interface AppDatabase {
  app_effects: { call_id: string; idempotency_key: string };
}

/** Creates the app's table; run once per store, before any app server starts. */
export async function createAppTable(ledger: Ledger): Promise<void> {
  await ledger.transaction((trx) =>
    sql`create table if not exists app_effects (call_id text not null, idempotency_key text not null)`.execute(
      trx,
    ),
  );
}

/** Tells the process where a call is; the process may die there. */
export type Reach = (point: KillPoint, tool: string, callId: string) => void;

/**
 * The reach of a process started with `TOOLGATE_KILL=<point>:<tool>:<n>`: the `n`th time it reaches
 * `point` with a call of `tool`, it says so on a line of its own and kills itself with SIGKILL, as
 * the kernel's OOM killer or a power cut would: no handler, no flush, no `finally` runs.
 */
export function killSwitch(spec: string | undefined): Reach {
  if (spec === undefined || spec === '') return () => undefined;
  const [point, tool, nth] = spec.split(':');
  let count = 0;
  return (reached, kind, callId) => {
    if (reached !== point || kind !== tool) return;
    count += 1;
    if (count !== Number(nth)) return;
    // Writes to a pipe are synchronous on Linux: the line is out before the process is gone.
    process.stdout.write(`${JSON.stringify({ killed: point, tool, id: callId })}\n`);
    process.kill(process.pid, 'SIGKILL');
  };
}

/** Opens the ledger named `sqlite:<path>` or `postgres:<connection string>`. */
export function ledgerAt(where: string): Promise<Ledger> {
  if (where.startsWith('sqlite:')) return sqliteLedger({ path: where.slice('sqlite:'.length) });
  if (where.startsWith('postgres:'))
    return postgresLedger({ connectionString: where.slice('postgres:'.length) });
  throw new Error(`expected sqlite:<path> or postgres:<url>, got ${where}`);
}

const inputSchema = (title: Kind) =>
  ({
    title,
    type: 'object',
    properties: { n: { type: 'integer', minimum: 0 } },
    required: ['n'],
    additionalProperties: false,
  }) as const;

/** A few milliseconds, so that a kill at a random instant can land in the middle of a tool. */
const pause = () => delay(Math.random() * 8);

/** The app's tools, one per kind. */
export function crashTools(effects: Effects, reach: Reach): ToolDefinition[] {
  const authorize =
    (kind: Kind) =>
    (_input: unknown, { call }: { readonly call: { readonly id: string } }) => {
      reach('authorize', kind, call.id);
      return true;
    };
  const effectful =
    (kind: Kind) =>
    async (
      input: { n: number },
      ctx: { readonly call: { readonly id: string }; readonly idempotencyKey: string },
    ) => {
      reach('execute', kind, ctx.call.id);
      await pause();
      effects.record(ctx.call.id, kind, ctx.idempotencyKey);
      reach('effect', kind, ctx.call.id);
      await pause();
      return { n: input.n };
    };
  return [
    defineTool({
      name: 'plain',
      inputSchema: inputSchema('plain'),
      authorize: authorize('plain'),
      execute: effectful('plain'),
    }),
    defineTool({
      name: 'idempotent',
      inputSchema: inputSchema('idempotent'),
      idempotent: true,
      authorize: authorize('idempotent'),
      execute: effectful('idempotent'),
    }),
    defineTool({
      name: 'approved',
      inputSchema: inputSchema('approved'),
      needsApproval: true,
      authorize: authorize('approved'),
      execute: effectful('approved'),
    }),
    defineTool({
      name: 'transactional',
      inputSchema: inputSchema('transactional'),
      transactional: true,
      authorize: authorize('transactional'),
      async execute(input, ctx) {
        reach('execute', 'transactional', ctx.call.id);
        await pause();
        await transactionOf<AppDatabase>(ctx)
          .insertInto('app_effects')
          .values({ call_id: ctx.call.id, idempotency_key: ctx.idempotencyKey })
          .execute();
        reach('written', 'transactional', ctx.call.id);
        await pause();
        return { n: input.n };
      },
    }),
  ];
}

/** Ajv, reaching `validate` each time a tool's input is checked (the tool is the schema's title). */
export function reachingJsonSchema(reach: Reach): JsonSchemaCompiler {
  return (schema) => {
    const validate = ajvJsonSchema(schema);
    const tool = typeof schema.title === 'string' ? schema.title : '';
    return (value) => {
      reach('validate', tool, '');
      return validate(value);
    };
  };
}

/** What {@link watchLedger} reports. */
export interface LedgerWatch {
  /** An event was appended inside a transaction that has not committed yet. */
  readonly appended?: (event: NewLedgerEvent) => void;
  /** A transaction committed these events (chained, or pending for the sequencer to chain). */
  readonly committed?: (events: readonly NewLedgerEvent[]) => void;
}

/**
 * The ledger, reporting each event as it is appended (inside its transaction) and again once its
 * transaction has committed, for kill points around the claim and the commit, and for telling
 * which events this process wrote.
 */
export function watchLedger(ledger: Ledger, watch: LedgerWatch): Ledger {
  const written = new WeakMap<object, NewLedgerEvent[]>();
  return {
    ...ledger,
    async transaction(work) {
      let events: NewLedgerEvent[] = [];
      const result = await ledger.transaction((trx) => {
        events = [];
        written.set(trx, events);
        return work(trx);
      });
      watch.committed?.(events);
      return result;
    },
    async appendEvent(trx, event) {
      const appended = await ledger.appendEvent(trx, event);
      written.get(trx)?.push(appended);
      watch.appended?.(event);
      return appended;
    },
    async appendEvents(trx, events) {
      const appended = await ledger.appendEvents(trx, events);
      written.get(trx)?.push(...appended);
      for (const event of events) watch.appended?.(event);
      return appended;
    },
    async recordEvents(trx, events) {
      await ledger.recordEvents(trx, events);
      written.get(trx)?.push(...events);
      for (const event of events) watch.appended?.(event);
    },
    async recordWith(trx, write, events) {
      const changed = await ledger.recordWith(trx, write, events);
      if (changed > 0) {
        written.get(trx)?.push(...events);
        for (const event of events) watch.appended?.(event);
      }
      return changed;
    },
    async begin() {
      const held = await ledger.begin();
      const events: NewLedgerEvent[] = [];
      written.set(held.trx, events);
      return {
        trx: held.trx,
        rollback: held.rollback,
        async commit() {
          await held.commit();
          watch.committed?.(events);
        },
      };
    },
  };
}

/** The kill points around the ledger's writes, reached through {@link watchLedger}. */
export function reachingLedger(ledger: Ledger, reach: Reach): Ledger {
  const tools = new Map<string, string>();
  // A refusal (a recovery's note among them) carries no record: its call's tool is the one its id
  // names (`<lane>g<generation>_<n>` runs KINDS[n % KINDS.length], as the app server proposes them).
  const toolOf = (event: NewLedgerEvent) => {
    if (event.record !== undefined) return String((JSON.parse(event.record) as { name?: unknown }).name);
    const n = /_(\d+)$/.exec(event.callId)?.[1];
    return tools.get(event.callId) ?? (n === undefined ? '' : (KINDS[Number(n) % KINDS.length] ?? ''));
  };
  return watchLedger(ledger, {
    appended(event) {
      const tool = toolOf(event);
      tools.set(event.callId, tool);
      if (event.to === 'executing' && event.from !== 'executing') reach('claim', tool, event.callId);
      if (event.to === 'executing' && event.from === 'executing' && event.reason?.code === 'recovered')
        reach('reclaim', tool, event.callId);
      if (event.to === 'committed') reach('commit', tool, event.callId);
    },
    committed(events) {
      for (const event of events) {
        const tool = tools.get(event.callId) ?? '';
        if (event.to === 'executing' && event.from !== 'executing') reach('claimed', tool, event.callId);
        if (event.to === 'committed') reach('committed', tool, event.callId);
      }
    },
  });
}

/** How long an app server's claim on a running call lasts: short, so that a restart takes over soon. */
export const LEASE_MS = 200;
