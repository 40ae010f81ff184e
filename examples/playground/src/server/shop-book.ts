import type { ToolContext } from '@toolgate/core';
import { transactionOf } from '@toolgate/server';
import type { Transaction } from 'kysely';
import { INITIAL_SHOP, type ShopState } from '../shop/shop-store.ts';
import type { ShopBackend } from '../shop/shop-tools.ts';
import { pause } from '../shop/tool-timing.ts';
import type { PlaygroundDatabase, PlaygroundDb } from './playground-db.ts';

/** How a conversation's pretend back end is paced: 1 like a real network, 0 at once. */
export type PaceOf = (session: string) => number;

/**
 * The server's shops, one per conversation, in the ledger's database, and the `ShopBackend` the
 * shop's tools run over.
 */
export interface ShopBook {
  readonly backend: ShopBackend;
  readonly read: (session: string) => Promise<ShopState>;
  /** A fresh shop for a new conversation. */
  readonly open: (trx: Transaction<PlaygroundDatabase>, session: string) => Promise<void>;
  /** The conversation a call belongs to is known before the call reaches the ledger: the chat says so. */
  readonly assign: (callId: string, session: string) => void;
  /** The call has settled: the ledger answers for it from now on. */
  readonly release: (callId: string) => void;
}

export function createShopBook(
  store: PlaygroundDb,
  options: { readonly paceOf: PaceOf; readonly transferHoldMs: number; readonly paymentsUrl: string },
): ShopBook {
  // Calls the chat has opened and the ledger may not hold yet (authorize runs before the first write).
  const assigned = new Map<string, string>();

  async function sessionOf(callId: string, trx?: Transaction<PlaygroundDatabase>): Promise<string> {
    const known = assigned.get(callId);
    if (known !== undefined) return known;
    const row = await (trx ?? store.db)
      .selectFrom('toolgate_calls')
      .select('session')
      .where('id', '=', callId)
      .executeTakeFirst();
    if (row === undefined) throw new Error(`no conversation is known for call "${callId}"`);
    return row.session;
  }

  async function readIn(
    db: Pick<Transaction<PlaygroundDatabase>, 'selectFrom'>,
    session: string,
  ): Promise<ShopState> {
    const row = await db
      .selectFrom('playground_shops')
      .select('state')
      .where('session', '=', session)
      .executeTakeFirst();
    if (row === undefined) throw new Error(`conversation "${session}" has no shop`);
    return JSON.parse(row.state) as ShopState;
  }

  async function change<T>(
    trx: Transaction<PlaygroundDatabase>,
    session: string,
    apply: (state: ShopState) => { output: T; next: Partial<ShopState> },
  ): Promise<T> {
    const state = await readIn(trx, session);
    const { output, next } = apply(state);
    await trx
      .updateTable('playground_shops')
      .set({ state: JSON.stringify({ ...state, ...next }) })
      .where('session', '=', session)
      .execute();
    return output;
  }

  const backend: ShopBackend = {
    async read(ctx) {
      const trx =
        ctx.transaction === undefined ? undefined : transactionOf<PlaygroundDatabase>(ctx as ToolContext);
      return readIn(trx ?? store.db, await sessionOf(ctx.call.id, trx));
    },
    async write(ctx, apply) {
      if (ctx.transaction !== undefined && ctx.transaction !== null) {
        const trx = transactionOf<PlaygroundDatabase>(ctx);
        return change(trx, await sessionOf(ctx.call.id, trx), apply);
      }
      ctx.signal.throwIfAborted();
      // An effect of its own, as a call to another service would be: written only while the call
      // still runs, so that a call cancelled in the meantime changes nothing.
      return store.write(async (trx) => {
        const row = await trx
          .selectFrom('toolgate_calls')
          .select(['status', 'session'])
          .where('id', '=', ctx.call.id)
          .executeTakeFirst();
        if (row?.status !== 'executing') throw new Error('the call stopped before its change was written');
        return change(trx, row.session, apply);
      });
    },
    async pause(ms, ctx, { fixed = false } = {}) {
      const scale = fixed ? 1 : options.paceOf(await sessionOf(ctx.call.id));
      await pause(ms * scale, ctx.signal);
    },
    transferHoldMs: options.transferHoldMs,
    paymentsUrl: options.paymentsUrl,
  };

  return {
    backend,
    read: (session) => readIn(store.db, session),
    open: async (trx, session) => {
      await trx
        .insertInto('playground_shops')
        .values({ session, state: JSON.stringify(INITIAL_SHOP) })
        .onConflict((conflict) => conflict.column('session').doNothing())
        .execute();
    },
    assign: (callId, session) => void assigned.set(callId, session),
    release: (callId) => void assigned.delete(callId),
  };
}
