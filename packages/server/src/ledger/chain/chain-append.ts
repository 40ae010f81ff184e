import { createPostgresChain } from './postgres-chain.ts';
import { createSqliteChain } from './sqlite-chain.ts';
import type { ChainAppender, ChainOptions } from './chain-rows.ts';

export type { ChainAppender } from './chain-rows.ts';
export { BATCH } from './postgres-chain.ts';

/**
 * What the ledger opens its appender with: its dialect, the hasher, and its transactions' states.
 *
 * @example
 * const options: ChainAppenderOptions = { dialect: 'postgres', hasher: chainHasher(undefined), stateOf: transactions.stateOf };
 */
export interface ChainAppenderOptions extends ChainOptions {
  readonly dialect: 'sqlite' | 'postgres';
}

/**
 * The dialect's appender, chosen once when the ledger opens.
 *
 * @example
 * const chain = createChainAppender({ dialect: 'sqlite', hasher, stateOf });
 * await chain.append(trx, [event]);
 */
export function createChainAppender({ dialect, ...options }: ChainAppenderOptions): ChainAppender {
  return dialect === 'postgres' ? createPostgresChain(options) : createSqliteChain(options);
}
