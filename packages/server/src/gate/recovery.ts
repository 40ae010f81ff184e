import { isExecuting, type DoubtCause, type ExecutingCall, type MoveNote } from '@toolgate/core/kit';
import type { ToolDefinition } from '@toolgate/core';
import { tampering, trailRecord } from '../ledger/chain/chain-check.ts';
import type { CallsTable } from '../ledger/schema.ts';
import { readRecord } from '../ledger/stored-record.ts';
import { expire } from './decisions.ts';
import type { GateParts } from './parts.ts';
import type { Recovery } from './server-gate.ts';

const RECOVERY: MoveNote = { actor: 'toolgate:recovery' };
const TIMEKEEPER: MoveNote = { actor: 'toolgate:expiry' };

/**
 * Settles the calls a process that died left open (their lease ran out), and the approvals that
 * ran out. A running call whose tool has `reconcile` is claimed under a new fencing token and its
 * `reconcile` asked what became of it; an idempotent or transactional tool's call is run again
 * under a new token with its idempotency key; a tool that says `onUnknown: 'hold'` has its call
 * held for a person; any other is ended `failed` / `interrupted`. An expired approval cancels its call.
 *
 * @example
 * const { rerun, reconciling, held, interrupted, expired } = await recover(parts);
 */
export async function recover(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'tools' | 'keeper' | 'pipeline' | 'follower' | 'life'>,
): Promise<Recovery> {
  const { ledger, keeper, settings, life } = parts;
  const now = settings.clock.now();
  const rerun: string[] = [];
  const reconciling: string[] = [];
  const held: string[] = [];
  const interrupted: string[] = [];
  const expired: string[] = [];
  const stale = await ledger.read((db) =>
    db
      .selectFrom('toolgate_calls')
      .selectAll()
      .where('status', 'in', ['pending', 'validated', 'executing'])
      .where('lease_expires_at', '<', now)
      .execute(),
  );
  for (const found of stale) {
    // A gate closed meanwhile takes nothing over: it would run a tool after close() returned.
    if (life.closed) break;
    if (keeper.claims.has(found.id) || keeper.drafts.has(found.id)) continue;
    const outcome = await reclaim(parts, found);
    if (outcome !== undefined) ({ rerun, reconciling, held, interrupted })[outcome].push(found.id);
  }
  const waiting = await ledger.read((db) =>
    db
      .selectFrom('toolgate_approvals')
      .select('call_id')
      .where('decision', 'is', null)
      .where('expires_at', '<=', now)
      // A call with an expiry timer is ended by that timer, once, on whichever process claims it.
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('toolgate_timers as t')
              .select('t.call_id')
              .whereRef('t.call_id', '=', 'toolgate_approvals.call_id')
              .where('t.kind', '=', 'expiry'),
          ),
        ),
      )
      .execute(),
  );
  for (const { call_id: id } of waiting) {
    if (life.closed) break;
    const next = await keeper.exclusive(id, () =>
      ledger.transaction(async (trx) => {
        const row = await keeper.lock(trx, id);
        return row?.status === 'awaiting_approval' ? expire(parts, trx, row, TIMEKEEPER.actor) : undefined;
      }),
    );
    if (next !== undefined) expired.push(id);
  }
  return { rerun, reconciling, held, interrupted, expired, reminded: [], escalated: [] };
}

/** What recovery does with a call whose process died, by its tool's kind. */
type Plan = 'reconciling' | 'rerun' | 'held' | 'interrupted';

function planFor(tool: ToolDefinition | undefined, status: string): Plan {
  if (tool === undefined || status !== 'executing') return 'interrupted';
  if (tool.reconcile !== undefined) return 'reconciling';
  if (tool.idempotent === true || tool.transactional === true) return 'rerun';
  return tool.onUnknown === 'hold' ? 'held' : 'interrupted';
}

/** What a recovery's claim did: took the call to run it again or reconcile it, or ended or held it. */
type Reclaimed =
  | {
      readonly kind: 'rerun' | 'reconciling';
      readonly fence: number;
      readonly key: string;
      readonly record: ExecutingCall;
    }
  | { readonly kind: 'held' | 'interrupted' };

const CRASHED: DoubtCause = { kind: 'crashed', message: 'the server stopped while the tool ran' };

/** Takes over one call whose lease ran out, unless someone else did first or its process came back. */
async function reclaim(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'tools' | 'keeper' | 'pipeline' | 'follower'>,
  found: CallsTable,
): Promise<Plan | undefined> {
  const { ledger, keeper, settings, tools } = parts;
  const { clock } = settings;
  const tool = tools.entry(found.tool, found.id)?.tool;
  const plan = planFor(tool, found.status);
  const again = plan === 'rerun' || plan === 'reconciling';
  const result = await keeper.exclusive(found.id, () =>
    ledger.transaction(async (trx): Promise<Reclaimed | undefined> => {
      const locked = await keeper.lock(trx, found.id);
      // Someone else recovered it, or its process came back and renewed its lease.
      if (
        locked === undefined ||
        locked.version !== found.version ||
        (locked.lease_expires_at ?? 0) >= clock.now()
      )
        return undefined;
      // What runs again, and what the trail records next, is what the chain covers: a row edited
      // behind the gate's back is not run again but ended from the record its last event holds.
      const row = await untampered(parts, trx, locked);
      if (row === undefined) return undefined;
      // A call taken to run again is executing: its row says so, and so does the record it holds.
      const record = again && row === locked ? readRecord(row.record) : undefined;
      if (record !== undefined && isExecuting(record)) {
        const fence = row.fence + 1;
        await trx
          .updateTable('toolgate_calls')
          .set({
            lease_owner: settings.instance,
            lease_expires_at: clock.now() + settings.leaseMs,
            fence,
            version: row.version + 1,
          })
          .where('id', '=', row.id)
          .where('version', '=', row.version)
          .execute();
        await keeper.refuse(
          trx,
          row,
          RECOVERY.actor,
          'recovered',
          plan === 'reconciling'
            ? 'the process running this call stopped; asking the system it called what became of it (reconcile), by its idempotency key'
            : `the process running this call stopped; running it again with the same idempotency key (${tool?.transactional === true ? 'transactional' : 'idempotent'} tool)`,
        );
        return {
          kind: plan,
          fence,
          key: row.idempotency_key,
          record,
        };
      }
      if (plan === 'held' && row === locked) {
        const next = await keeper.moveIn(
          trx,
          row,
          { type: 'doubt', message: `${CRASHED.message}; the tool has no reconcile to ask` },
          RECOVERY.actor,
          { unfenced: true },
        );
        return next === undefined ? undefined : { kind: 'held' as const };
      }
      const next = await keeper.moveIn(
        trx,
        row,
        {
          type: 'fail',
          reason: {
            code: 'interrupted',
            message:
              row.status === 'executing'
                ? 'the server stopped while the tool ran; it may or may not have taken effect'
                : 'the server stopped before this call ran; nothing was run',
          },
        },
        RECOVERY.actor,
        { unfenced: true },
      );
      return next === undefined ? undefined : { kind: 'interrupted' as const };
    }),
  );
  if (result === undefined || !('fence' in result)) return result?.kind;
  keeper.claimed(found.id, {
    fence: result.fence,
    idempotencyKey: result.key,
    session: found.session,
    owner: found.owner,
  });
  parts.follower.guard(found.id);
  if (result.kind === 'reconciling') parts.pipeline.reconcile(result.record, CRASHED, RECOVERY);
  else parts.pipeline.run(result.record, RECOVERY);
  return result.kind;
}

/**
 * The call's row, or, when it no longer says what the audit trail says of it, the row with the
 * record its last event holds (the refusal audited and reported); `undefined` when the trail holds
 * no record of it to go by, and nothing can be trusted.
 */
async function untampered(
  parts: Pick<GateParts, 'settings' | 'keeper'>,
  trx: Parameters<GateParts['keeper']['lock']>[0],
  row: CallsTable,
): Promise<CallsTable | undefined> {
  const tampered = await tampering(trx, row);
  if (tampered === undefined) return row;
  const trail = await trailRecord(trx, row.id);
  const trusted = trail === undefined ? undefined : { ...row, record: trail };
  parts.settings.onError(new Error(`toolgate: call "${row.id}" was not run again: ${tampered}`));
  await parts.keeper.refuse(
    trx,
    trusted ?? row,
    RECOVERY.actor,
    'tampered',
    `${tampered}; it was not run again`,
  );
  return trusted;
}

/**
 * Runs `recover` every `leaseMs` until the gate closes; returns the stop.
 *
 * @example
 * const stopSweeping = sweep(parts, () => recover(parts));
 */
export function sweep(parts: Pick<GateParts, 'settings' | 'life'>, run: () => Promise<unknown>): () => void {
  const { clock, leaseMs, onError } = parts.settings;
  let timer: unknown;
  const next = () => {
    timer = clock.setTimeout(() => {
      if (parts.life.closed) return;
      run().then(next, (error: unknown) => {
        onError(error);
        next();
      });
    }, leaseMs);
  };
  next();
  return () => {
    if (timer !== undefined) clock.clearTimeout(timer);
  };
}
