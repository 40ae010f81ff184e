import { createHash } from 'node:crypto';
import {
  canonicalJson,
  isTerminal,
  transition,
  type CallEvent,
  type CallKeeper,
  type Clock,
  type ExecutionScope,
  type MoveNote,
  type Reason,
  type ToolCallRecord,
} from '@toolgate/core';
import type { Transaction } from 'kysely';
import type { RefusalCode } from '../gate/decision.ts';
import type { HeldTransaction, Ledger, NewLedgerEvent } from '../ledger/ledger.ts';
import type { CallsTable, LedgerDatabase } from '../ledger/schema.ts';
import { readRecord, storeRecord } from '../ledger/stored-record.ts';
import { startToolSpan, type ToolSpan } from '../gate/telemetry.ts';

type Trx = Transaction<LedgerDatabase>;

/**
 * A call this process has read and is checking, before anything about it is durable. Checking is
 * pure (validation, the app's authorize), so nothing is lost if the process dies meanwhile: the
 * caller proposes the same id again. The draft's moves are written together, in one transaction,
 * with the first move that must be durable (executing, awaiting a person, or an ending).
 */
export interface Draft {
  record: ToolCallRecord;
  readonly session: string;
  readonly owner: string;
  readonly proposalHash: string;
  readonly moves: { readonly from: ToolCallRecord | undefined; readonly to: ToolCallRecord; readonly actor: string }[];
}

/** What this process holds on a call it runs: the fencing token of its claim, and the run's key. */
export interface Claim {
  readonly fence: number;
  readonly idempotencyKey: string;
  /** Whose call it is, so that a cancel can be checked without the database (which a transactional run may hold). */
  readonly session: string;
  readonly owner: string;
  renewal?: unknown;
  span?: ToolSpan;
}

/**
 * The server gate's keeper: records live in the ledger, every durable move is one transaction
 * with its event, and execution is claimed with a lease and a fencing token.
 *
 * @example
 * const keeper = createLedgerKeeper({ ledger, clock, leaseMs: 30_000, approvalTtlMs: 600_000, instance: 'app-1', ... });
 */
export interface LedgerKeeper extends CallKeeper {
  /** Starts a call in memory; the first durable move writes it. */
  readonly draft: (draft: Draft) => void;
  readonly drafts: ReadonlyMap<string, Draft>;
  /** The call as this process sees it: its draft, or the ledger's row. */
  readonly read: (id: string) => Promise<StoredCall | undefined>;
  /** Runs `work` with this process's moves on `id` held back until it ends. */
  readonly exclusive: <T>(id: string, work: () => Promise<T>) => Promise<T>;
  /** A move made inside a transaction the caller runs (approval, recovery); no fence needed. */
  readonly moveIn: (trx: Trx, row: CallsTable, event: CallEvent, actor: string, extra?: MoveExtra) => Promise<ToolCallRecord | undefined>;
  /** Appends a refusal (`from === to`) to the audit trail for a call, naming who was refused (or a recovery's note). */
  readonly refuse: (trx: Trx, row: CallsTable, actor: string, code: RefusalCode | 'recovered', message: string) => Promise<void>;
  /** Reads a call's row inside a transaction, locking it on PostgreSQL. */
  readonly lock: (trx: Trx, id: string) => Promise<CallsTable | undefined>;
  /** This process now runs `id` under fencing token `fence` (an approval or a recovery claimed it). */
  readonly claimed: (id: string, claim: Claim) => void;
  readonly claims: ReadonlyMap<string, Claim>;
  /** Lets go of a call whose run this process stopped (a cancel, a lost lease). */
  readonly release: (id: string) => void;
  /** Called after each move that this process wrote, with the record it wrote. */
  readonly onMoved: (listener: (call: ToolCallRecord, previous: ToolCallRecord | undefined) => void) => () => void;
  readonly close: () => void;
}

/**
 * A call as the ledger holds it.
 *
 * @example
 * const stored = await keeper.read('call_1');
 * if (stored?.record.status === 'awaiting_approval') notify(stored.owner);
 */
export interface StoredCall {
  readonly record: ToolCallRecord;
  readonly session: string;
  readonly owner: string;
  readonly proposalHash: string;
  readonly draft: boolean;
}

/** Columns a move sets beside the record, for the caller's own checks (an approval, a recovery claim). */
interface MoveExtra {
  /** Skip the fencing check on a move out of `executing` (recovery has checked the lease itself). */
  readonly unfenced?: boolean;
}

/** What the keeper needs from its gate. */
export interface LedgerKeeperOptions {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly leaseMs: number;
  readonly approvalTtlMs: number;
  /** Names this process in `lease_owner`, so that a row says who holds it. */
  readonly instance: string;
  readonly onError: (error: unknown) => void;
  /**
   * A move this process tried could not be written (the database is down or locked). The move did
   * not happen; the pipeline stops there, and the gate tells whoever waits on the call.
   */
  readonly onMoveFailed: (id: string, error: unknown) => void;
  /**
   * Another instance wrote the call first (the same id was proposed to both at once): this
   * process's draft is dropped unwritten, and whoever waits on it must read the call that was stored.
   */
  readonly onTaken: (id: string) => void;
  /** This process lost the lease on a call it runs: stop its tool, drop its result. */
  readonly onLeaseLost: (id: string) => void;
  /** Whether a tool runs inside the ledger's transaction. */
  readonly transactional: (name: string, id: string) => boolean;
  /** Makes a fresh idempotency key for a new call. */
  readonly newKey: () => string;
}

/**
 * SHA-256 hex of the canonical JSON of a validated input: the same value as core's async
 * `inputHash`, computed here synchronously inside the move that stores the input.
 *
 * @example
 * hashInput({ amount_cents: 2000 }); // 'b3…'
 */
export function hashInput(input: unknown): string {
  return createHash('sha256').update(canonicalJson(input)).digest('hex');
}

const STALE: unique symbol = Symbol('stale');

const DURABLE = new Set(['executing', 'awaiting_approval', 'committed', 'cancelled', 'rejected', 'failed']);

/**
 * Builds the ledger keeper.
 *
 * @example
 * const keeper = createLedgerKeeper(options);
 */
export function createLedgerKeeper(options: LedgerKeeperOptions): LedgerKeeper {
  const { ledger, clock, leaseMs, instance } = options;
  const drafts = new Map<string, Draft>();
  const claims = new Map<string, Claim>();
  // The row as this process last wrote it, for each call it runs.
  const known = new Map<string, CallsTable>();
  const busy = new Map<string, Promise<unknown>>();
  const moved = new Set<(call: ToolCallRecord, previous: ToolCallRecord | undefined) => void>();
  let closed = false;

  const notify = (call: ToolCallRecord, previous: ToolCallRecord | undefined) => {
    for (const listener of moved) {
      try {
        listener(call, previous);
      } catch (error) {
        options.onError(error);
      }
    }
  };

  function exclusive<T>(id: string, work: () => Promise<T>): Promise<T> {
    const before = busy.get(id) ?? Promise.resolve();
    const run = before.then(work, work);
    const tail = run.catch(() => undefined);
    busy.set(id, tail);
    void tail.then(() => {
      if (busy.get(id) === tail) busy.delete(id);
    });
    return run;
  }

  const lock = (trx: Trx, id: string): Promise<CallsTable | undefined> => {
    let query = trx.selectFrom('toolgate_calls').selectAll().where('id', '=', id);
    if (ledger.dialect === 'postgres') query = query.forUpdate();
    return query.executeTakeFirst();
  };

  const reasonOf = (record: ToolCallRecord): Reason | undefined => record.history[record.history.length - 1]?.reason;

  /** The columns that follow from a record's status. */
  function columnsFor(next: ToolCallRecord, row: { readonly fence: number; readonly input_hash: string | null }) {
    const now = next.updatedAt;
    const input = next.status === 'pending' || next.input === undefined ? null : canonicalJson(next.input);
    const columns = {
      status: next.status,
      record: storeRecord(next),
      updated_at: now,
      input,
      input_hash: input === null ? row.input_hash : hashInput(next.input),
      output: next.status === 'committed' && next.output !== undefined ? JSON.stringify(next.output) : null,
      reason: next.reason === undefined ? null : JSON.stringify(next.reason),
      lease_owner: null as string | null,
      lease_expires_at: null as number | null,
      fence: row.fence,
    };
    if (next.status === 'executing') {
      columns.lease_owner = instance;
      columns.lease_expires_at = clock.now() + leaseMs;
      columns.fence = row.fence + 1;
    }
    return columns;
  }

  async function afterward(trx: Trx, call: ToolCallRecord, session: string, inputHash: string | null): Promise<void> {
    if (call.status === 'awaiting_approval' && inputHash !== null) {
      const now = clock.now();
      await trx
        .insertInto('toolgate_approvals')
        .values({ call_id: call.id, session, input_hash: inputHash, requested_at: now, expires_at: now + options.approvalTtlMs, decision: null, approver: null, decided_at: null, consumed: 0 })
        .execute();
    }
  }

  function moveEvent(session: string, from: ToolCallRecord | undefined, to: ToolCallRecord, actor: string): NewLedgerEvent {
    const reason = from === undefined ? undefined : reasonOf(to);
    return {
      callId: to.id,
      session,
      from: from?.status ?? null,
      to: to.status,
      actor,
      at: to.updatedAt,
      ...(reason === undefined ? {} : { reason }),
      record: storeRecord(to),
    };
  }

  /** Writes a draft and its moves so far, ending with `last`. `undefined` when the id was taken meanwhile. */
  async function writeDraft(trx: Trx, draft: Draft, last: ToolCallRecord): Promise<{ fence: number; key: string } | undefined> {
    const key = options.newKey();
    const columns = columnsFor(last, { fence: 0, input_hash: null });
    const inserted = await trx
      .insertInto('toolgate_calls')
      .values({
        id: last.id,
        session: draft.session,
        owner: draft.owner,
        tool: last.name,
        proposal_hash: draft.proposalHash,
        version: draft.moves.length,
        idempotency_key: key,
        created_at: last.createdAt,
        ...columns,
      })
      .onConflict((conflict) => conflict.column('id').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return undefined;
    await ledger.appendEvents(
      trx,
      draft.moves.map((move) => moveEvent(draft.session, move.from, move.to, move.actor)),
    );
    await afterward(trx, last, draft.session, columns.input_hash);
    if (last.status === 'executing') {
      known.set(last.id, {
        id: last.id,
        session: draft.session,
        owner: draft.owner,
        tool: last.name,
        proposal_hash: draft.proposalHash,
        version: draft.moves.length,
        idempotency_key: key,
        created_at: last.createdAt,
        ...columns,
      });
    }
    return { fence: columns.fence, key };
  }

  const moveIn = async (trx: Trx, row: CallsTable, event: CallEvent, actor: string, extra: MoveExtra = {}): Promise<ToolCallRecord | undefined> => {
    const moved = await tryMove(trx, row, event, actor, extra);
    return moved === STALE ? undefined : moved;
  };

  /** One move from `row`; `STALE` when the row was not the call's latest (someone moved it since). */
  async function tryMove(trx: Trx, row: CallsTable, event: CallEvent, actor: string, extra: MoveExtra = {}): Promise<ToolCallRecord | undefined | typeof STALE> {
    const current = readRecord(row.record);
    const next = transition(current, event, clock.now());
    if (next === undefined) return undefined;
    if (current.status === 'executing' && extra.unfenced !== true && !(event.type === 'cancel' && event.reason.code === 'user_cancelled')) {
      // Only the claim that started this run may end it: a process whose lease ran out (and was
      // taken over) finds another fencing token here, and its result is dropped.
      if (claims.get(row.id)?.fence !== row.fence) {
        await refuse(trx, row, actor, 'stale', `a result for this call arrived from ${instance} after its claim on the call had ended; it was dropped`);
        return undefined;
      }
    }
    const columns = columnsFor(next, row);
    const updated = await trx
      .updateTable('toolgate_calls')
      .set({ ...columns, version: row.version + 1 })
      .where('id', '=', row.id)
      .where('version', '=', row.version)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return STALE;
    await ledger.appendEvent(trx, moveEvent(row.session, current, next, actor));
    await afterward(trx, next, row.session, columns.input_hash);
    if (next.status === 'executing') {
      claims.set(row.id, { fence: columns.fence, idempotencyKey: row.idempotency_key, session: row.session, owner: row.owner });
      known.set(row.id, { ...row, ...columns, version: row.version + 1 });
    } else known.delete(row.id);
    return next;
  }

  async function refuse(trx: Trx, row: CallsTable, actor: string, code: RefusalCode | 'recovered', message: string): Promise<void> {
    const record = readRecord(row.record);
    await ledger.appendEvent(trx, {
      callId: row.id,
      session: row.session,
      from: record.status,
      to: record.status,
      actor,
      at: clock.now(),
      reason: { code, message },
      record: row.record,
    });
  }

  /** The moves of this process's own work on a call: in memory while a draft, else one transaction each. */
  function move(id: string, event: CallEvent, note: MoveNote): ToolCallRecord | undefined | Promise<ToolCallRecord | undefined> {
    const draft = drafts.get(id);
    if (draft !== undefined && !busy.has(id)) return reported(id, draftMove(draft, event, note));
    return reported(id, exclusive(id, async () => {
      const pending = drafts.get(id);
      if (pending !== undefined) return draftMove(pending, event, note, true);
      const moved = await ledger.transaction(async (trx) => {
        // A call this process runs is moved from the row it last wrote, without reading it first;
        // only when someone moved it since is the row read (and locked).
        const cached = known.get(id);
        if (cached !== undefined) {
          const next = await tryMove(trx, cached, event, note.actor);
          if (next !== STALE) return next === undefined ? undefined : { previous: readRecord(cached.record), next };
        }
        const row = await lock(trx, id);
        if (row === undefined) return undefined;
        const next = await moveIn(trx, row, event, note.actor);
        return next === undefined ? undefined : { previous: readRecord(row.record), next };
      });
      if (moved === undefined) return undefined;
      written(moved.next, moved.previous);
      return moved.next;
    }));
  }

  /** A move that failed is no move: the pipeline stops, and the gate hears why. */
  function reported<T>(id: string, result: T | Promise<T>): T | Promise<T | undefined> {
    if (!(result instanceof Promise)) return result;
    return result.catch((error: unknown) => {
      options.onMoveFailed(id, error);
      return undefined;
    });
  }

  /** A move on a call that is not written yet; `held` when the caller already holds the call's turn. */
  function draftMove(draft: Draft, event: CallEvent, note: MoveNote, held = false): ToolCallRecord | undefined | Promise<ToolCallRecord | undefined> {
    const next = transition(draft.record, event, clock.now());
    if (next === undefined) return undefined;
    if (next.status === 'pending') {
      draft.record = next; // a preview: not a move, not written
      return next;
    }
    draft.moves.push({ from: draft.record, to: next, actor: note.actor });
    if (!DURABLE.has(next.status)) {
      const previous = draft.record;
      draft.record = next;
      notify(next, previous);
      return next;
    }
    return held ? flush(draft, next) : exclusive(draft.record.id, () => flush(draft, next));
  }

  async function flush(draft: Draft, last: ToolCallRecord): Promise<ToolCallRecord | undefined> {
    const previous = draft.record;
    let wrote: { fence: number; key: string } | undefined;
    try {
      wrote = await ledger.transaction((trx) => writeDraft(trx, draft, last));
    } catch (error) {
      // Nothing was written: the draft stays as it was, and the caller may propose the same id again.
      draft.moves.pop();
      drafts.delete(draft.record.id);
      throw error;
    }
    drafts.delete(last.id);
    if (wrote === undefined) {
      options.onTaken(last.id);
      return undefined;
    }
    if (last.status === 'executing') claims.set(last.id, { fence: wrote.fence, idempotencyKey: wrote.key, session: draft.session, owner: draft.owner });
    written(last, previous);
    return last;
  }

  function written(next: ToolCallRecord, previous: ToolCallRecord | undefined): void {
    if (previous?.status === 'executing' && next.status !== 'executing') release(next.id, next);
    notify(next, previous);
  }

  function release(id: string, settled?: ToolCallRecord): void {
    known.delete(id);
    const claim = claims.get(id);
    if (claim === undefined) return;
    claims.delete(id);
    if (claim.renewal !== undefined) clock.clearTimeout(claim.renewal);
    claim.span?.end(settled);
  }

  function renew(id: string, claim: Claim): void {
    claim.renewal = clock.setTimeout(() => {
      if (closed || claims.get(id) !== claim) return;
      ledger
        .transaction((trx) =>
          trx
            .updateTable('toolgate_calls')
            .set({ lease_expires_at: clock.now() + leaseMs })
            .where('id', '=', id)
            .where('fence', '=', claim.fence)
            .where('status', '=', 'executing')
            .executeTakeFirst(),
        )
        .then(
          (result) => {
            if (claims.get(id) !== claim) return;
            if (Number(result.numUpdatedRows) === 0) {
              // Cancelled elsewhere, or taken over after this process stalled past its lease.
              release(id);
              options.onLeaseLost(id);
            } else renew(id, claim);
          },
          (error: unknown) => {
            // The database is out of reach: keep trying while the lease may still hold.
            options.onError(error);
            if (claims.get(id) === claim) renew(id, claim);
          },
        );
    }, Math.max(1, Math.floor(leaseMs / 3)));
  }

  async function open(call: ToolCallRecord, name: string): Promise<ExecutionScope | undefined> {
    const claim = claims.get(call.id);
    if (claim === undefined) return undefined;
    claim.span = startToolSpan(call);
    renew(call.id, claim);
    if (!options.transactional(name, call.id)) {
      return {
        context: { idempotencyKey: claim.idempotencyKey },
        commit: (running, output, note) => move(running.id, { type: 'commit', output }, note),
      };
    }
    let held: HeldTransaction;
    try {
      held = await ledger.begin();
    } catch (error) {
      release(call.id);
      throw error;
    }
    let done = false;
    return {
      context: { idempotencyKey: claim.idempotencyKey, transaction: held.trx },
      commit: (running, output, note) =>
        exclusive(running.id, async () => {
          done = true;
          let next: ToolCallRecord | undefined;
          try {
            const row = await lock(held.trx, running.id);
            next = row === undefined ? undefined : await moveIn(held.trx, row, { type: 'commit', output }, note.actor);
            if (next === undefined) {
              await held.rollback();
              return undefined;
            }
            await held.commit();
          } catch (error) {
            await held.rollback().catch(() => undefined);
            throw error;
          }
          written(next, running);
          return next;
        }),
      abandon: async () => {
        if (done) return;
        done = true;
        await held.rollback();
      },
    };
  }

  return {
    move,
    open: (call, entry) => open(call, entry.tool.name),
    draft: (draft) => {
      drafts.set(draft.record.id, draft);
      notify(draft.record, undefined);
    },
    drafts,
    async read(id) {
      const draft = drafts.get(id);
      if (draft !== undefined) return { record: draft.record, session: draft.session, owner: draft.owner, proposalHash: draft.proposalHash, draft: true };
      const row = await ledger.read((db) => db.selectFrom('toolgate_calls').select(['record', 'session', 'owner', 'proposal_hash']).where('id', '=', id).executeTakeFirst());
      return row === undefined ? undefined : { record: readRecord(row.record), session: row.session, owner: row.owner, proposalHash: row.proposal_hash, draft: false };
    },
    exclusive,
    moveIn,
    refuse,
    lock,
    claimed: (id, claim) => claims.set(id, claim),
    claims,
    release: (id) => release(id),
    onMoved(listener) {
      moved.add(listener);
      return () => moved.delete(listener);
    },
    close() {
      closed = true;
      for (const id of [...claims.keys()]) release(id);
    },
  };
}

/**
 * Whether a status ends a call, for rows read back from the ledger.
 *
 * @example
 * ended('committed'); // true
 */
export const ended = isTerminal;
