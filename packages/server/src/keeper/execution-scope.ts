import type { CallEvent, ExecutionScope, MoveNote } from '@toolgate/core/kit';
import type { ToolCallRecord } from '@toolgate/core';
import type { HeldTransaction, Ledger } from '../ledger/ledger.ts';
import { startToolSpan } from './telemetry.ts';
import type { Claims } from './claims.ts';
import type { RowMoves } from './row-moves.ts';

/**
 * What opening a run needs: the claims, the row moves, how a plain commit is moved, and what to
 * do once a commit is written.
 *
 * @example
 * const open = executionScopes({ ledger, claims, rows, transactional, move, written });
 */
export interface ExecutionScopeParts {
  readonly ledger: Ledger;
  readonly claims: Claims;
  readonly rows: RowMoves;
  /** Whether a tool runs inside the ledger's transaction. */
  readonly transactional: (name: string, id: string) => boolean;
  /** Moves a call this process runs, as the keeper's `move` does. */
  readonly move: (
    id: string,
    event: Extract<CallEvent, { type: 'commit' }>,
    note: MoveNote,
  ) => ToolCallRecord | undefined | Promise<ToolCallRecord | undefined>;
  readonly written: (next: ToolCallRecord, previous: ToolCallRecord | undefined) => void;
  /** The calls whose run this process is ending now (the keeper's `ending`). */
  readonly ending: Set<string>;
}

/**
 * Opens the run of a call this process has claimed: its lease is renewed while the tool runs, the
 * tool gets the call's idempotency key and, if it is transactional, a transaction of its own that
 * the call's `committed` move joins (its writes and the commit are kept together or not at all).
 * `undefined` when the claim is gone.
 *
 * @example
 * const open = executionScopes(parts);
 * const scope = await open(call, 'transfer');
 */
export function executionScopes(
  parts: ExecutionScopeParts,
): (call: ToolCallRecord, name: string) => Promise<ExecutionScope | undefined> {
  const { ledger, claims, rows } = parts;
  return async (call, name) => {
    const claim = claims.claims.get(call.id);
    if (claim === undefined) return undefined;
    claim.span ??= startToolSpan(call);
    claims.renew(call.id);
    if (!parts.transactional(name, call.id)) {
      return {
        context: { idempotencyKey: claim.idempotencyKey },
        commit: (running, output, note, evidence) =>
          parts.move(
            running.id,
            evidence === undefined ? { type: 'commit', output } : { type: 'commit', output, evidence },
            note,
          ),
      };
    }
    let held: HeldTransaction;
    try {
      held = await ledger.begin();
    } catch (error) {
      claims.release(call.id);
      throw error;
    }
    let done = false;
    return {
      context: { idempotencyKey: claim.idempotencyKey, transaction: held.trx },
      // Not in the call's turn of the queue: work waiting there for this call (a second recovery's
      // take-over, say) waits for a connection, and on SQLite the only one is the one this
      // transaction holds, so the two would wait for each other for ever. The row, locked here in
      // the tool's own transaction, decides what a move in between would have: a call moved since
      // is not committed.
      commit: async (running, output, note) => {
        done = true;
        let next: ToolCallRecord | undefined;
        parts.ending.add(running.id);
        try {
          const row = await rows.lock(held.trx, running.id);
          next =
            row === undefined
              ? undefined
              : await rows.moveIn(held.trx, row, { type: 'commit', output }, note.actor);
          if (next === undefined) {
            await held.rollback();
            return undefined;
          }
          await held.commit();
        } catch (error) {
          await held.rollback().catch(() => undefined);
          throw error;
        } finally {
          parts.ending.delete(running.id);
        }
        parts.written(next, running);
        return next;
      },
      abandon: async () => {
        if (done) return;
        done = true;
        await held.rollback();
      },
    };
  };
}
