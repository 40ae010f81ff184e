import type { ToolCallStatus } from '@toolgate/core';
import type { Generated } from 'kysely';

/**
 * One row per call id: the call's current state, its lease and the whole record the gate keeps.
 * Times are milliseconds since the epoch; JSON columns hold text.
 *
 * @example
 * const row = await ledger.db.selectFrom('toolgate_calls').selectAll().where('id', '=', 'call_1').executeTakeFirst();
 */
export interface CallsTable {
  id: string;
  session: string;
  /** The principal whose proposal opened the session. */
  owner: string;
  tool: string;
  /** Hash of the proposal as first seen: the same id with other arguments is an `id_conflict`. */
  proposal_hash: string;
  input_hash: string | null;
  /** Canonical JSON of the validated input. */
  input: string | null;
  status: ToolCallStatus;
  /** Bumped by every move, so that a write can insist on the version it read. */
  version: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  /** Fencing token, bumped on every claim: a result carrying an older token is dropped. */
  fence: number;
  idempotency_key: string;
  output: string | null;
  reason: string | null;
  /** The whole `ToolCallRecord` as JSON, maintained by the gate. */
  record: string;
  created_at: number;
  updated_at: number;
}

/**
 * One row per call that asked a person: the approval is bound to the hash of the input they saw.
 *
 * @example
 * await trx.insertInto('toolgate_approvals').values({ call_id: 'call_1', session: 's1', input_hash, requested_at: now, expires_at: now + 600_000, decision: null, approver: null, decided_at: null, consumed: 0 }).execute();
 */
export interface ApprovalsTable {
  call_id: string;
  session: string;
  input_hash: string;
  requested_at: number;
  expires_at: number;
  decision: ApprovalDecision | null;
  approver: string | null;
  decided_at: number | null;
  /** 1 once the approval started the execution it allowed (0 or 1 on both dialects). */
  consumed: number;
}

/**
 * How an approval ended.
 *
 * @example
 * const decision: ApprovalDecision = 'approved';
 */
export type ApprovalDecision = 'approved' | 'denied' | 'cancelled' | 'expired';

/**
 * The audit trail and the live feed: one row per move or refusal, hash-chained in `seq` order.
 *
 * @example
 * const rows = await ledger.db.selectFrom('toolgate_events').selectAll().where('call_id', '=', 'call_1').orderBy('seq').execute();
 */
export interface EventsTable {
  seq: number;
  call_id: string;
  session: string;
  from_status: ToolCallStatus | null;
  to_status: ToolCallStatus;
  actor: string;
  at: number;
  reason: string | null;
  /** The call's record right after the move (for a refusal, as it stood): what a live feed sends. */
  record: string | null;
  prev_hash: string;
  hash: string;
}

/**
 * An event committed with its move and not chained yet (PostgreSQL, when the chain was busy): the
 * sequencer gives it its `seq` and hash, moves it to `toolgate_events` and deletes it here.
 *
 * @example
 * const waiting = await ledger.db.selectFrom('toolgate_pending').select('id').execute();
 */
export interface PendingTable {
  id: Generated<number>;
  call_id: string;
  session: string;
  from_status: ToolCallStatus | null;
  to_status: ToolCallStatus;
  actor: string;
  at: number;
  reason: string | null;
  record: string | null;
}

/**
 * One row per session: the principal of its first proposal owns it, for good.
 *
 * @example
 * const session = await ledger.db.selectFrom('toolgate_sessions').selectAll().where('id', '=', 'chat_1').executeTakeFirst();
 */
export interface SessionsTable {
  id: string;
  owner: string;
  created_at: number;
}

/**
 * The chain head, a single row (`id` 1): the last event's number and hash. Only whoever holds the
 * chain (SQLite's write lock; PostgreSQL's advisory lock, see chain-append.ts) moves it.
 *
 * @example
 * const head = await ledger.db.selectFrom('toolgate_chain').selectAll().executeTakeFirstOrThrow();
 */
export interface ChainTable {
  id: number;
  last_seq: number;
  last_hash: string;
  /** How the chain is hashed (`sha256` or `hmac-sha256`), set by the first append. */
  algorithm: string | null;
}

/**
 * One row per call a budget admitted: how much of the budget it takes, under which key, and when
 * (its window starts there). What a budget has used is the sum over the rows in its window whose
 * call is waiting for a person, running, committed or failed.
 *
 * @example
 * await trx.insertInto('toolgate_budget_uses').values({ call_id: 'call_1', budget: 'transfers', key: 'user_42', amount: 2000, at: now }).execute();
 */
export interface BudgetUsesTable {
  call_id: string;
  budget: string;
  key: string;
  amount: number;
  at: number;
}

/**
 * One row per budget key: the sum of its rows in `toolgate_budget_uses`, kept in step with them
 * (a row leaves the sum when it leaves its window or its call stops counting). Deciding a call
 * locks this row first.
 *
 * @example
 * const total = await trx.selectFrom('toolgate_budget_totals').select('amount').where('budget', '=', 'transfers').where('key', '=', 'user_42').executeTakeFirst();
 */
export interface BudgetTotalsTable {
  budget: string;
  key: string;
  amount: number;
  /** At most the time of the key's oldest use (`null`: it has none), so a decision looks for expired uses only when one may be. */
  oldest: number | null;
}

/**
 * One row per approval of a call whose tool needs more than one approver, bound to the hash of
 * the input that approver was shown.
 *
 * @example
 * await trx.insertInto('toolgate_approvers').values({ call_id: 'call_1', principal: 'manager_1', input_hash, at: now }).execute();
 */
export interface ApproversTable {
  call_id: string;
  principal: string;
  input_hash: string;
  at: number;
}

/**
 * One row per principal a waiting call still asks to decide it (an approver of a quorum who has
 * approved is no longer asked): the index a principal's inbox is read by. Kept in the transaction
 * that makes the call wait, records a vote, or ends the wait.
 *
 * @example
 * const mine = await ledger.db.selectFrom('toolgate_asks').select('call_id').where('principal', '=', 'manager_1').execute();
 */
export interface AsksTable {
  call_id: string;
  principal: string;
  /** When the principal was first asked. */
  at: number;
}

/**
 * One row per turn a stream reader read (`serverGate.turn`), once its stream is over: who the model
 * acted for, and the claim on running `onTurnSettled` for it (done once `done_at` is set).
 *
 * @example
 * const open = await ledger.db.selectFrom('toolgate_turns').selectAll().where('done_at', 'is', null).execute();
 */
export interface TurnsTable {
  session: string;
  id: string;
  principal: string;
  created_at: number;
  done_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  /** Bumped on every claim: a handler run whose claim passed to another process writes nothing. */
  fence: number;
  attempts: number;
}

/**
 * A turn's calls in the provider's order. `answer` holds the record the reader was answered with
 * when that is all there is to know (the call had ended, or was refused without being stored);
 * otherwise the call is read from `toolgate_calls` once it has ended.
 *
 * @example
 * const calls = await ledger.db.selectFrom('toolgate_turn_calls').selectAll().where('turn_id', '=', 'turn_1').orderBy('position').execute();
 */
export interface TurnCallsTable {
  session: string;
  turn_id: string;
  position: number;
  call_id: string;
  answer: string | null;
}

/**
 * One row per reminder, escalation step and expiry of a call waiting for a person: due at
 * `due_at`, done once (`outcome` `fired`, `failed` or `cancelled`), taken by a process under a
 * lease with a fencing token.
 *
 * @example
 * const due = await ledger.db.selectFrom('toolgate_timers').selectAll().where('done_at', 'is', null).where('due_at', '<=', Date.now()).execute();
 */
export interface TimersTable {
  call_id: string;
  kind: TimerKind;
  /** The escalation's index in its tool's `escalate`; 0 for a reminder and an expiry. */
  step: number;
  due_at: number;
  done_at: number | null;
  outcome: 'fired' | 'failed' | 'cancelled' | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  /** Bumped on every claim: a firing whose claim passed to another process writes nothing. */
  fence: number;
}

/**
 * What a timer of a waiting call does when it is due.
 *
 * @example
 * const kind: TimerKind = 'escalation';
 */
export type TimerKind = 'reminder' | 'escalation' | 'expiry';

/**
 * One row per notice and channel: a notice to one principal about one call, delivered once the
 * channel takes it (`delivered_at`), tried again from `due_at` until then.
 *
 * @example
 * const waiting = await ledger.db.selectFrom('toolgate_notices').selectAll().where('delivered_at', 'is', null).execute();
 */
export interface NoticesTable {
  /** The notice's stable id: the channel's idempotency key. */
  id: string;
  channel: string;
  call_id: string;
  session: string;
  kind: 'asked' | 'reminder' | 'escalated' | 'decided' | 'expired';
  /** Whom it is for. */
  principal: string;
  from_principal: string;
  from_on_behalf_of: string | null;
  /** The call's record when the notice was written, as JSON. */
  record: string;
  created_at: number;
  /** Orders the notices of one moment: asked, reminder, escalated, then the end. */
  rank: number;
  due_at: number;
  attempts: number;
  delivered_at: number | null;
  /** What the channel answered the delivery with, to update what it showed. */
  ref: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  fence: number;
}

/**
 * The ledger's tables, for `Kysely<LedgerDatabase>` (the type of `ledger.db` and of the
 * transactions it hands out).
 *
 * @example
 * async function pendingCalls(db: Kysely<LedgerDatabase>) {
 *   return db.selectFrom('toolgate_calls').select(['id', 'tool']).where('status', '=', 'pending').execute();
 * }
 */
export interface LedgerDatabase {
  toolgate_calls: CallsTable;
  toolgate_approvals: ApprovalsTable;
  toolgate_events: EventsTable;
  toolgate_sessions: SessionsTable;
  toolgate_chain: ChainTable;
  toolgate_turns: TurnsTable;
  toolgate_turn_calls: TurnCallsTable;
  toolgate_budget_uses: BudgetUsesTable;
  toolgate_budget_totals: BudgetTotalsTable;
  toolgate_approvers: ApproversTable;
  toolgate_asks: AsksTable;
  toolgate_pending: PendingTable;
  toolgate_timers: TimersTable;
  toolgate_notices: NoticesTable;
}
