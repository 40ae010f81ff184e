import { isTerminal, type Clock, type ToolCallRecord } from '@toolgate/core';
import { transition, type CallEvent } from '@toolgate/core/kit';
import type { Transaction } from 'kysely';
import type { RefusalCode } from '../decision/decision.ts';
import { cameFrom, type VoteVia } from '../decision/channel-reason.ts';
import type { NewLedgerEvent, OutcomeNote } from '../ledger/ledger.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { followAsks } from '../inbox/asks.ts';
import { linkCompensation } from './compensation-link.ts';
import type { CallsTable, LedgerDatabase } from '../ledger/schema.ts';
import {
  changed,
  INSERT_CALL,
  insertCallValues,
  run,
  UPDATE_CALL,
  updateCallValues,
} from '../ledger/statements.ts';
import { readRecord } from '../ledger/stored-record.ts';
import type { Policy } from '../policy/admission.ts';
import type { Claims } from './claims.ts';
import { moveEvent, rowColumns, type Lease } from './row-columns.ts';

type Trx = Transaction<LedgerDatabase>;

/** Columns a move sets beside the record, for the caller's own checks (an approval, a recovery claim). */
export interface MoveExtra {
  /** Skip the fencing check on a move out of `executing` (recovery has checked the lease itself). */
  readonly unfenced?: boolean;
}

/**
 * A call not written yet, as the keeper writes it: its session and owner, the proposal's hash,
 * and its moves so far (the last one the first that must be durable).
 *
 * @example
 * const draft: DraftRow = { session: 'chat_1', owner: 'user_42', proposalHash, moves: [{ from: undefined, to: pending, actor: 'user_42' }] };
 */
export interface DraftRow {
  readonly session: string;
  readonly owner: string;
  readonly proposalHash: string;
  readonly moves: readonly {
    readonly from: ToolCallRecord | undefined;
    readonly to: ToolCallRecord;
    readonly actor: string;
  }[];
}

/**
 * How a call the gate makes itself (a compensation) is written: under the key it is given, and
 * without the policy's say (what its budgets count is the calls a model proposes).
 *
 * @example
 * await rows.writeDraft(trx, draft, last, { key: `${original.idempotency_key}:compensate`, admit: false });
 */
export interface DraftWrite {
  readonly key?: string;
  readonly admit?: boolean;
}

type Moves = DraftRow['moves'];

/**
 * What the policy makes of a draft about to be written, in the transaction that writes it: the
 * budgets' verdict on a call that starts or waits for a person (not on a call the gate makes
 * itself), then who is asked about a call that waits.
 */
async function judgeDraft(
  policy: Policy | undefined,
  trx: Trx,
  draft: DraftRow,
  proposed: ToolCallRecord,
  how: DraftWrite,
): Promise<{ last: ToolCallRecord; moves: Moves; after: ((trx: Trx) => Promise<void>) | undefined }> {
  let last = proposed;
  let { moves } = draft;
  let after: ((trx: Trx) => Promise<void>) | undefined;
  const final = moves[moves.length - 1];
  if (policy === undefined || final?.from === undefined) return { last, moves, after };
  const call = { previous: final.from, session: draft.session, principal: moves[0]?.actor ?? draft.owner };
  if (how.admit !== false && (last.status === 'executing' || last.status === 'awaiting_approval')) {
    // Decided in this transaction, before the row exists: what the policy counts is what is written.
    const verdict = await policy.admit(trx, { record: last, ...call });
    ({ after } = verdict);
    if (verdict.record !== last) {
      last = verdict.record;
      moves = [...moves.slice(0, -1), { from: final.from, to: last, actor: verdict.actor ?? final.actor }];
    }
  }
  if (policy.ask !== undefined && last.status === 'awaiting_approval') {
    // A compensation, written without the budgets' say, still asks its tool's approvers.
    const asking = await policy.ask(trx, { record: last, ...call });
    if (asking.record !== last) {
      const actor = asking.actor ?? moves[moves.length - 1]?.actor ?? final.actor;
      last = asking.record;
      moves = [...moves.slice(0, -1), { from: final.from, to: last, actor }];
      // A call nobody could be asked about is refused before it counts against any budget.
      if (last.status === 'rejected') after = undefined;
    }
  }
  return { last, moves, after };
}

/** Answered by {@link RowMoves.tryMove} when the row given was not the call's latest (someone moved it since). */
export const STALE: unique symbol = Symbol('stale');

/**
 * Moves written inside a transaction: a draft's first write, one move of a stored call (checked
 * against its fencing token when it ends a run), and a refusal. Each writes the row and its event
 * together, and an approval row when the move asks a person.
 *
 * @example
 * const moves = createRowMoves({ ledger, clock, leaseMs, approvalTtlMs, instance, keyOf, claims });
 * await ledger.transaction(async (trx) => moves.moveIn(trx, await moves.lock(trx, id), { type: 'cancel', reason }, 'user_42'));
 */
export interface RowMoves {
  /** Reads a call's row inside a transaction, locking it on PostgreSQL. */
  readonly lock: (trx: Trx, id: string) => Promise<CallsTable | undefined>;
  /**
   * Writes a draft and its moves so far, ending with `last` or with what the policy made of it (a
   * budget's refusal, a wait for a person): `record` is what was written. `undefined` when the id
   * was taken meanwhile.
   */
  readonly writeDraft: (
    trx: Trx,
    draft: DraftRow,
    last: ToolCallRecord,
    how?: DraftWrite,
  ) => Promise<{ fence: number; key: string; record: ToolCallRecord } | undefined>;
  /** One move of a stored call from `row` (its record read already, or read here). */
  readonly tryMove: (
    trx: Trx,
    row: CallsTable,
    event: CallEvent,
    actor: string,
    extra?: MoveExtra,
    current?: ToolCallRecord,
  ) => Promise<ToolCallRecord | undefined | typeof STALE>;
  readonly moveIn: (
    trx: Trx,
    row: CallsTable,
    event: CallEvent,
    actor: string,
    extra?: MoveExtra,
  ) => Promise<ToolCallRecord | undefined>;
  readonly refuse: (
    trx: Trx,
    row: CallsTable,
    actor: string,
    code: RefusalCode | 'recovered' | OutcomeNote,
    message: string,
    via?: VoteVia,
  ) => Promise<void>;
  /**
   * Writes a new record of a stored call that keeps its status (a vote after which it still
   * waits), with its events, then what follows every move: the inbox and the policy's watch.
   * `false` when the row moved meanwhile (nothing is written).
   */
  readonly restate: (
    trx: Trx,
    row: CallsTable,
    next: ToolCallRecord,
    events: readonly NewLedgerEvent[],
  ) => Promise<boolean>;
}

/**
 * What {@link createRowMoves} needs.
 *
 * @example
 * const options: RowMovesOptions = { ledger, clock, leaseMs: 30_000, approvalTtlMs: DAY, instance: 'app-1', keyOf: (call) => call.id, claims };
 */
export interface RowMovesOptions {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly leaseMs: number;
  readonly approvalTtlMs: number;
  readonly instance: string;
  /** The key a call's effect goes by downstream (its tool's `idempotencyKey`, or its id). */
  readonly keyOf: (record: ToolCallRecord) => string;
  readonly claims: Claims;
  /** Decides a call about to start or wait for a person against the gate's policy, and gives back a share when it stops counting. */
  readonly policy?: Policy;
}

/**
 * Builds the row moves of one keeper.
 *
 * @example
 * const moves = createRowMoves(options);
 */
export function createRowMoves({
  ledger,
  clock,
  leaseMs,
  approvalTtlMs,
  instance,
  keyOf,
  claims,
  policy,
}: RowMovesOptions): RowMoves {
  const lease = (): Lease => ({ instance, expiresAt: clock.now() + leaseMs });
  const waits = { clock, approvalTtlMs, policy };

  const lock = (trx: Trx, id: string): Promise<CallsTable | undefined> => {
    let query = trx.selectFrom('toolgate_calls').selectAll().where('id', '=', id);
    if (ledger.dialect === 'postgres') query = query.forUpdate();
    return query.executeTakeFirst();
  };

  async function writeDraft(
    trx: Trx,
    draft: DraftRow,
    proposed: ToolCallRecord,
    how: DraftWrite = {},
  ): Promise<{ fence: number; key: string; record: ToolCallRecord } | undefined> {
    const { last, moves, after } = await judgeDraft(policy, trx, draft, proposed, how);
    const columns = rowColumns(last, { fence: 0, input_hash: null }, lease());
    const row: CallsTable = {
      id: last.id,
      session: draft.session,
      owner: draft.owner,
      tool: last.name,
      proposal_hash: draft.proposalHash,
      version: moves.length,
      idempotency_key: how.key ?? keyOf(last),
      created_at: last.createdAt,
      ...columns,
    };
    const events = moves.map((move) => moveEvent(draft.session, move.from, move.to, move.actor));
    const write = { statement: INSERT_CALL, values: insertCallValues(row) };
    if ((await ledger.recordWith(trx, write, events)) === 0) return undefined;
    await afterward(waits, trx, last, draft, columns.input_hash, moves[moves.length - 1]?.from);
    await followAsks(trx, undefined, last, clock.now());
    await after?.(trx);
    if (last.status === 'executing' && last.doubt === undefined) claims.known.set(last.id, row);
    return { fence: columns.fence, key: row.idempotency_key, record: last };
  }

  async function tryMove(
    trx: Trx,
    row: CallsTable,
    event: CallEvent,
    actor: string,
    extra: MoveExtra = {},
    current = readRecord(row.record),
  ): Promise<ToolCallRecord | undefined | typeof STALE> {
    const next = transition(current, event, clock.now());
    if (next === undefined) return undefined;
    if (
      current.status === 'executing' &&
      extra.unfenced !== true &&
      !(event.type === 'cancel' && event.reason.code === 'user_cancelled')
    ) {
      // Only the claim that started this run may end it: a process whose lease ran out (and was
      // taken over) finds another fencing token here, and its result is dropped.
      if (claims.claims.get(row.id)?.fence !== row.fence) {
        await refuse(
          trx,
          row,
          actor,
          'stale',
          `a result for this call arrived from ${instance} after its claim on the call had ended; it was dropped`,
        );
        return undefined;
      }
    }
    const columns = rowColumns(next, row, lease());
    // A person's edit may change what the effect is named by: the run it starts goes by the new name.
    const key =
      next.status === 'executing' && current.status !== 'executing' ? keyOf(next) : row.idempotency_key;
    const write = {
      statement: UPDATE_CALL,
      values: updateCallValues({ ...columns, version: row.version + 1 }, row.id, row.version),
    };
    const audit = moveEvent(row.session, current, next, actor);
    // A call that stops counting against its budgets gives its share back, before the chain's lock.
    if (
      next.status === 'cancelled' &&
      (current.status === 'awaiting_approval' || current.status === 'executing')
    ) {
      if (changed(await run(trx, ledger.dialect, write.statement, write.values)) === 0) return STALE;
      await policy?.release(trx, row.id);
      await ledger.recordEvents(trx, [audit]);
    } else if ((await ledger.recordWith(trx, write, [audit])) === 0) return STALE;
    await afterward(waits, trx, next, row, columns.input_hash, current);
    await followAsks(trx, current, next, clock.now());
    await followMove(
      { ledger, clock, claims, lock },
      trx,
      { ...row, ...columns, idempotency_key: key },
      row,
      next,
      actor,
    );
    return next;
  }

  async function refuse(
    trx: Trx,
    row: CallsTable,
    actor: string,
    code: RefusalCode | 'recovered' | OutcomeNote,
    message: string,
    via?: VoteVia,
  ): Promise<void> {
    const record = readRecord(row.record);
    await ledger.recordEvents(trx, [
      {
        callId: row.id,
        session: row.session,
        from: record.status,
        to: record.status,
        actor,
        at: clock.now(),
        // A vote a channel passed on names the channel, as the channel's own refusals do.
        reason: via === undefined ? { code, message } : { code, message, ...cameFrom(actor, via) },
        // No copy of the record: a refusal leaves the call as it was, and the feed sends the call
        // as it stands with it. Fifteen refusals of a call with a large output would store fifteen copies.
      },
    ]);
  }

  return {
    lock,
    writeDraft,
    tryMove,
    restate: (trx, row, next, events) =>
      restate({ ledger, clock, policy, lease: lease() }, trx, row, next, events),
    async moveIn(trx, row, event, actor, extra) {
      const moved = await tryMove(trx, row, event, actor, extra);
      return moved === STALE ? undefined : moved;
    },
    refuse,
  };
}

/** See {@link RowMoves.restate}. */
async function restate(
  parts: { ledger: Ledger; clock: Clock; policy: Policy | undefined; lease: Lease },
  trx: Trx,
  row: CallsTable,
  next: ToolCallRecord,
  events: readonly NewLedgerEvent[],
): Promise<boolean> {
  const { ledger, clock, policy } = parts;
  const current = readRecord(row.record);
  const columns = rowColumns(next, row, parts.lease);
  const write = {
    statement: UPDATE_CALL,
    values: updateCallValues({ ...columns, version: row.version + 1 }, row.id, row.version),
  };
  if ((await ledger.recordWith(trx, write, events)) === 0) return false;
  await followAsks(trx, current, next, clock.now());
  await policy?.watch?.(trx, { session: row.session, owner: row.owner, previous: current, next });
  return true;
}

/**
 * What follows any move in its transaction: an approval row for a call that now waits for a
 * person, then the policy's watch (its timers begin or end with the wait).
 */
async function afterward(
  { clock, approvalTtlMs, policy }: { clock: Clock; approvalTtlMs: number; policy: Policy | undefined },
  trx: Trx,
  call: ToolCallRecord,
  { session, owner }: { readonly session: string; readonly owner: string },
  inputHash: string | null,
  previous: ToolCallRecord | undefined,
): Promise<void> {
  if (call.status === 'awaiting_approval' && inputHash !== null) {
    const now = clock.now();
    await trx
      .insertInto('toolgate_approvals')
      .values({
        call_id: call.id,
        session,
        input_hash: inputHash,
        requested_at: now,
        expires_at: now + approvalTtlMs,
        decision: null,
        approver: null,
        decided_at: null,
        consumed: 0,
      })
      .execute();
  }
  await policy?.watch?.(trx, { session, owner, previous, next: call });
}

/**
 * What follows a move of a stored call in its transaction: a new name for its effect (a person's
 * edit changed it), the compensated call told how its compensation ended, and this process's claim
 * on a call it now runs (or none on one that stopped running here).
 */
async function followMove(
  parts: {
    readonly ledger: Ledger;
    readonly clock: Clock;
    readonly claims: Claims;
    readonly lock: RowMoves['lock'];
  },
  trx: Trx,
  moved: CallsTable,
  before: CallsTable,
  next: ToolCallRecord,
  actor: string,
): Promise<void> {
  const { claims } = parts;
  if (moved.idempotency_key !== before.idempotency_key)
    await trx
      .updateTable('toolgate_calls')
      .set({ idempotency_key: moved.idempotency_key })
      .where('id', '=', moved.id)
      .execute();
  // A compensation that ended tells the call it undoes, in the same transaction.
  if (next.compensates !== undefined && isTerminal(next.status))
    await linkCompensation({ ledger: parts.ledger, trx, at: parts.clock.now() }, next, actor, parts.lock);
  if (next.status !== 'executing' || next.doubt !== undefined) {
    claims.known.delete(moved.id);
    return;
  }
  claims.claimed(moved.id, {
    fence: moved.fence,
    idempotencyKey: moved.idempotency_key,
    session: moved.session,
    owner: moved.owner,
  });
  claims.known.set(moved.id, { ...moved, version: before.version + 1 });
}
