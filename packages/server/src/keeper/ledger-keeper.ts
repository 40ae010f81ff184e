import { isTerminal, type Clock, type ToolCallRecord } from '@toolgate/core';
import { transition, type CallEvent, type CallKeeper, type MoveNote } from '@toolgate/core/kit';
import type { Transaction } from 'kysely';
import type { RefusalCode } from '../decision/decision.ts';
import type { VoteVia } from '../decision/channel-reason.ts';
import type { Ledger, OutcomeNote } from '../ledger/ledger.ts';
import type { CallsTable, LedgerDatabase } from '../ledger/schema.ts';
import { storable } from '../ledger/guards/storable.ts';
import { READ_CALL, run } from '../ledger/statements.ts';
import { readRecord } from '../ledger/stored-record.ts';
import type { Policy } from '../policy/admission.ts';
import { createCallQueue } from './call-queue.ts';
import { createClaims, type Claim, type Claims } from './claims.ts';
import { createEndingRetry } from './ending-retry.ts';
import { executionScopes } from './execution-scope.ts';
import { createRowMoves, STALE, type MoveExtra, type RowMoves } from './row-moves.ts';

export type { Claim } from './claims.ts';
export { hashInput } from './row-columns.ts';

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
  readonly moves: {
    readonly from: ToolCallRecord | undefined;
    readonly to: ToolCallRecord;
    readonly actor: string;
  }[];
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
  readonly moveIn: (
    trx: Trx,
    row: CallsTable,
    event: CallEvent,
    actor: string,
    extra?: MoveExtra,
  ) => Promise<ToolCallRecord | undefined>;
  /**
   * Appends a refusal (`from === to`) to the audit trail for a call, naming who was refused (or a
   * recovery's note) and, for a vote a channel passed on, where it came from.
   */
  readonly refuse: (
    trx: Trx,
    row: CallsTable,
    actor: string,
    code: RefusalCode | 'recovered' | OutcomeNote,
    message: string,
    via?: VoteVia,
  ) => Promise<void>;
  /** Reads a call's row inside a transaction, locking it on PostgreSQL. */
  readonly lock: (trx: Trx, id: string) => Promise<CallsTable | undefined>;
  /** A new record of a call that keeps its status (a quorum's vote), with its events and what follows a move. */
  readonly restate: RowMoves['restate'];
  /** Writes a call the gate makes itself (a compensation), with its moves so far, in the caller's transaction. */
  readonly writeCall: RowMoves['writeDraft'];
  /** This process now runs `id` under fencing token `fence` (an approval or a recovery claimed it). */
  readonly claimed: (id: string, claim: Claim) => void;
  readonly claims: ReadonlyMap<string, Claim>;
  /** Lets go of a call whose run this process stopped (a cancel, a lost lease). */
  readonly release: (id: string) => void;
  /**
   * Whether this process is writing the end of its own run of `id` now: an ending a listener
   * hears of meanwhile is this process's own, not one committed elsewhere that must stop the run.
   */
  readonly ending: (id: string) => boolean;
  /** Called after each move that this process wrote, with the record it wrote. */
  readonly onMoved: (
    listener: (call: ToolCallRecord, previous: ToolCallRecord | undefined) => void,
  ) => () => void;
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
  /** The key a call's effect goes by downstream (its tool's `idempotencyKey`, or its id). */
  readonly keyOf: (record: ToolCallRecord) => string;
  /** How long the end of a run this process holds is tried again while the ledger is unavailable (see `EndingRetry`). */
  readonly endingRetryMs: number;
  /** Decides a call about to start or wait for a person against the gate's policy (budgets, quorum). */
  readonly policy?: Policy;
}

/** Whether a call runs somewhere: executing, and not held in doubt (a held call runs nowhere, and is claimed by none). */
const runs = (call: ToolCallRecord): boolean => call.status === 'executing' && call.doubt === undefined;

const DURABLE = new Set(['executing', 'awaiting_approval', 'committed', 'cancelled', 'rejected', 'failed']);

/**
 * Builds the ledger keeper from its parts: the per-call queue, the claims, the row moves and the
 * execution scopes. Here live the drafts and the one `move` the pipeline calls.
 *
 * @example
 * const keeper = createLedgerKeeper(options);
 */
export function createLedgerKeeper(options: LedgerKeeperOptions): LedgerKeeper {
  const { ledger, clock } = options;
  const drafts = new Map<string, Draft>();
  // Calls whose run this process is ending, from the write until the record is kept (see `ending`).
  const ending = new Set<string>();
  const moved = moveListeners(options.onError);
  const queue = createCallQueue();
  const claims = createClaims({
    ledger,
    clock,
    leaseMs: options.leaseMs,
    onError: options.onError,
    onLeaseLost: options.onLeaseLost,
  });
  const endings = createEndingRetry({
    claims,
    clock,
    boundMs: options.endingRetryMs,
    onError: options.onError,
  });
  const rows = createRowMoves({
    ledger,
    clock,
    leaseMs: options.leaseMs,
    approvalTtlMs: options.approvalTtlMs,
    instance: options.instance,
    keyOf: options.keyOf,
    claims,
    ...(options.policy === undefined ? {} : { policy: options.policy }),
  });

  const notify = moved.notify;

  function written(next: ToolCallRecord, previous: ToolCallRecord | undefined): void {
    if (previous?.status === 'executing' && !runs(next)) claims.release(next.id, next);
    notify(next, previous);
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
  function draftMove(
    draft: Draft,
    event: CallEvent,
    note: MoveNote,
    held = false,
  ): ToolCallRecord | undefined | Promise<ToolCallRecord | undefined> {
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
    return held ? flush(draft, next) : queue.exclusive(draft.record.id, () => flush(draft, next));
  }

  async function flush(draft: Draft, proposed: ToolCallRecord): Promise<ToolCallRecord | undefined> {
    const previous = draft.record;
    const last = await writeDraft(
      { ledger, rows, claims, drafts, onTaken: options.onTaken },
      draft,
      proposed,
    );
    if (last !== undefined) written(last, previous);
    return last;
  }

  /** A move of a stored call this process works on, in a transaction of its own. */
  async function storedMove(
    id: string,
    event: CallEvent,
    note: MoveNote,
  ): Promise<ToolCallRecord | undefined> {
    const result = await ledger.transaction((trx) => moveStored(trx, { claims, rows }, id, event, note));
    if (result === undefined) return undefined;
    written(result.next, result.previous);
    return result.next;
  }

  /** The moves of this process's own work on a call: in memory while a draft, else one transaction each. */
  function move(
    id: string,
    event: CallEvent,
    note: MoveNote,
  ): ToolCallRecord | undefined | Promise<ToolCallRecord | undefined> {
    const draft = drafts.get(id);
    if (draft !== undefined && !queue.busy(id)) return reported(id, draftMove(draft, event, note));
    const write = () =>
      queue.exclusive(id, async () => {
        const pending = drafts.get(id);
        return pending !== undefined ? draftMove(pending, event, note, true) : storedMove(id, event, note);
      });
    // A call this process runs only moves to its end: that move must not be lost to an outage.
    if (!claims.claims.has(id)) return reported(id, write());
    ending.add(id);
    const wrote = endings.write(id, write);
    const done = () => ending.delete(id);
    wrote.then(done, done);
    return reported(id, wrote);
  }

  const open = executionScopes({
    ledger,
    claims,
    rows,
    transactional: options.transactional,
    move,
    written,
    ending,
  });

  return {
    move,
    open: (call, entry) => open(call, entry.tool.name),
    draft: (draft) => {
      drafts.set(draft.record.id, draft);
      notify(draft.record, undefined);
    },
    drafts,
    read: (id) => readCall(ledger, drafts, id),
    exclusive: queue.exclusive,
    moveIn: rows.moveIn,
    restate: rows.restate,
    refuse: rows.refuse,
    lock: rows.lock,
    writeCall: rows.writeDraft,
    claimed: claims.claimed,
    claims: claims.claims,
    release: (id) => claims.release(id),
    ending: (id) => ending.has(id),
    onMoved: moved.add,
    close: claims.close,
  };
}

/** Who hears of each move this process wrote; a listener that throws is reported, and the others still hear. */
function moveListeners(onError: (error: unknown) => void) {
  const listeners = new Set<(call: ToolCallRecord, previous: ToolCallRecord | undefined) => void>();
  return {
    notify: (call: ToolCallRecord, previous: ToolCallRecord | undefined): void => {
      for (const listener of listeners) {
        try {
          listener(call, previous);
        } catch (error) {
          onError(error);
        }
      }
    },
    add: (listener: (call: ToolCallRecord, previous: ToolCallRecord | undefined) => void): (() => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The call as this process sees it: its draft, or the ledger's row. */
async function readCall(
  ledger: Ledger,
  drafts: ReadonlyMap<string, Draft>,
  id: string,
): Promise<StoredCall | undefined> {
  const draft = drafts.get(id);
  if (draft !== undefined)
    return {
      record: draft.record,
      session: draft.session,
      owner: draft.owner,
      proposalHash: draft.proposalHash,
      draft: true,
    };
  if (!storable(id)) return undefined;
  const row = await ledger.read(
    async (db) =>
      (
        await run<Pick<CallsTable, 'record' | 'session' | 'owner' | 'proposal_hash'>>(
          db,
          ledger.dialect,
          READ_CALL,
          [id],
        )
      ).rows[0],
  );
  return row === undefined
    ? undefined
    : {
        record: readRecord(row.record),
        session: row.session,
        owner: row.owner,
        proposalHash: row.proposal_hash,
        draft: false,
      };
}

/**
 * Writes a draft with its moves so far and the durable move `proposed`, in one transaction, and
 * claims the call when it now runs here. `undefined` when another instance wrote the call first
 * (the draft is dropped unwritten). A write that failed leaves the draft as it was, and throws.
 */
async function writeDraft(
  keeper: {
    readonly ledger: Ledger;
    readonly rows: RowMoves;
    readonly claims: Claims;
    readonly drafts: Map<string, Draft>;
    readonly onTaken: (id: string) => void;
  },
  draft: Draft,
  proposed: ToolCallRecord,
): Promise<ToolCallRecord | undefined> {
  const { ledger, rows, claims, drafts } = keeper;
  let wrote: { fence: number; key: string; record: ToolCallRecord } | undefined;
  try {
    wrote = await ledger.transaction((trx) => rows.writeDraft(trx, draft, proposed));
  } catch (error) {
    // Nothing was written: the draft stays as it was, and the caller may propose the same id again.
    draft.moves.pop();
    drafts.delete(draft.record.id);
    throw error;
  }
  drafts.delete(proposed.id);
  if (wrote === undefined) {
    keeper.onTaken(proposed.id);
    return undefined;
  }
  // The policy may have written another move than the one asked for (a budget's refusal).
  const last = wrote.record;
  if (runs(last))
    claims.claimed(last.id, {
      fence: wrote.fence,
      idempotencyKey: wrote.key,
      session: draft.session,
      owner: draft.owner,
    });
  return last;
}

/**
 * One move of a stored call this process works on, inside `trx`. A call this process runs is
 * moved from the row it last wrote, without reading it first; only when someone moved it since
 * is the row read (and locked).
 */
async function moveStored(
  trx: Trx,
  { claims, rows }: { readonly claims: Claims; readonly rows: RowMoves },
  id: string,
  event: CallEvent,
  note: MoveNote,
): Promise<{ previous: ToolCallRecord; next: ToolCallRecord } | undefined> {
  const cached = claims.known.get(id);
  if (cached !== undefined) {
    const previous = readRecord(cached.record);
    const next = await rows.tryMove(trx, cached, event, note.actor, {}, previous);
    if (next !== STALE) return next === undefined ? undefined : { previous, next };
  }
  const row = await rows.lock(trx, id);
  if (row === undefined) return undefined;
  const previous = readRecord(row.record);
  const next = await rows.tryMove(trx, row, event, note.actor, {}, previous);
  return next === undefined || next === STALE ? undefined : { previous, next };
}

/**
 * Whether a status ends a call, for rows read back from the ledger.
 *
 * @example
 * ended('committed'); // true
 */
export const ended = isTerminal;
