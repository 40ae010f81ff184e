import type { ToolContext } from '@toolgate/core';
import type { Transaction } from 'kysely';

/**
 * The ledger's open transaction in a `transactional: true` tool, typed with your tables: write
 * through it and your rows commit with the call's `committed` record, or not at all. Throws when
 * the tool is not running transactionally on a server gate (a browser gate, or a tool without
 * `transactional: true`), so a write can never silently escape the call's transaction.
 *
 * @example
 * const transfer = defineTool({
 *   name: 'transfer', transactional: true, inputSchema,
 *   async execute({ to, amount_cents }, ctx) {
 *     const trx = transactionOf<Bank>(ctx);
 *     await trx.updateTable('accounts').set((eb) => ({ cents: eb('cents', '+', amount_cents) })).where('email', '=', to).execute();
 *     return { to, amount_cents };
 *   },
 * });
 */
export function transactionOf<DB>(ctx: ToolContext): Transaction<DB> {
  if (ctx.transaction === undefined || ctx.transaction === null) {
    throw new Error(
      `transactionOf: "${ctx.call.name}" has no transaction: declare it \`transactional: true\` and run it on a server gate.`,
    );
  }
  return ctx.transaction as Transaction<DB>;
}
