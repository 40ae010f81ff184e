import type { ToolCallRecord } from '@toolgate/core';
import type { Tail } from '../feed/feed.ts';
import { openSessionFeed } from '../feed/session-feed.ts';
import type { PushFeed } from '../feed/feed.ts';
import type { Ledger, LedgerMove } from '../ledger/ledger.ts';
import { readRecord } from '../ledger/stored-record.ts';

/**
 * The principal an inbox is read for; anything but a non-empty string throws, since an inbox read
 * for nobody would answer nothing and hide the mistake.
 *
 * @example
 * const principal = inboxPrincipal('serverGate.awaiting', user.id);
 */
export function inboxPrincipal(where: string, principal: unknown): string {
  if (typeof principal !== 'string' || principal === '')
    throw new TypeError(`${where}: \`principal\` must be a non-empty string (whose inbox to read).`);
  return principal;
}

/**
 * The calls waiting for this principal's decision, across sessions, oldest first: those that ask
 * them (their tool's `approvers` named them) and that they have not approved yet.
 *
 * @example
 * const calls = await awaitingCalls(ledger, 'manager_1');
 */
export async function awaitingCalls(ledger: Ledger, principal: string): Promise<ToolCallRecord[]> {
  const rows = await ledger.read((db) =>
    db
      .selectFrom('toolgate_asks')
      .innerJoin('toolgate_calls', 'toolgate_calls.id', 'toolgate_asks.call_id')
      .select('toolgate_calls.record')
      .where('toolgate_asks.principal', '=', principal)
      .where('toolgate_calls.status', '=', 'awaiting_approval')
      .orderBy('toolgate_calls.created_at')
      .orderBy('toolgate_calls.id')
      .execute(),
  );
  return rows.map((row) => readRecord(row.record));
}

/**
 * A principal's inbox as of ledger event `seq`, for a feed that then follows from `seq`: a move
 * after it may already show in `calls`, and sent again it leaves the call as it is.
 *
 * @example
 * const { seq, calls } = await inboxSnapshot(ledger, 'manager_1');
 */
export async function inboxSnapshot(
  ledger: Ledger,
  principal: string,
): Promise<{ readonly seq: number; readonly calls: ToolCallRecord[] }> {
  const seq = await ledger.head();
  return { seq, calls: await awaitingCalls(ledger, principal) };
}

/**
 * Whether a move is about a call that asks (or asked) this principal: the moves that bring a call
 * into their inbox, change it there, or take it out (approved by them, decided, expired).
 *
 * @example
 * if (concerns(move, 'manager_1')) send(move);
 */
export function concerns(move: LedgerMove, principal: string): boolean {
  return move.record.approval?.asked?.includes(principal) === true;
}

/**
 * The moves of every call that asks this principal, across sessions: each after `after` (`0`:
 * from the start), then live ones; without `after`, live ones only (as a session's feed).
 *
 * @example
 * for await (const move of openInboxFeed({ ledger, tail }, 'manager_1', seq, () => undefined)) send(move);
 */
export function openInboxFeed(
  { ledger, tail }: { readonly ledger: Ledger; readonly tail: Tail },
  principal: string,
  after: number | undefined,
  onClose: () => void,
): PushFeed<LedgerMove> {
  const match = (move: LedgerMove) => concerns(move, principal);
  return openSessionFeed(
    { ledger, tail, match, visible: (move) => Promise.resolve(match(move)) },
    undefined,
    after,
    onClose,
  );
}
