import type Pg from 'pg';

/** What a query the connection did not need to send answers: no rows, as PostgreSQL would. */
export interface Unsent {
  readonly command: string;
  readonly rowCount: null;
  readonly rows: readonly [];
}

/**
 * A connection's BEGIN, held back and sent with the transaction's first statement: one write to
 * the socket and one round trip instead of two each. Each of a move's transactions pays a socket
 * write per statement, which is much of a call's CPU where system calls are costly. The BEGIN
 * goes first in the same extended-protocol batch (before the one Sync), so the transaction starts
 * exactly as it would have, before the statement runs; a transaction that sends nothing (its
 * work threw before its first statement) sends neither its BEGIN nor its ROLLBACK.
 *
 * @example
 * const begin = heldBegin(pg.Query);
 * const unsent = begin.hold('begin'); // { command: 'BEGIN', rowCount: null, rows: [] }, nothing sent
 * const result = await begin.query(client, config); // BEGIN and the statement, in one write
 */
export interface HeldBegin {
  /** Answers a BEGIN, or the end of a transaction that sent nothing, without sending it. */
  readonly hold: (text: string) => Unsent | undefined;
  /** Sends `config` on `client`, with the held BEGIN in front of it if one is held; answers the statement's result. */
  readonly query: (client: QueryClient, config: QueryConfig) => Promise<unknown>;
  /** The connection goes back to the pool: nothing is held any more. */
  readonly reset: () => void;
}

/** The part of a pg client the held BEGIN sends through. */
export interface QueryClient {
  query(config: QueryConfig | Pg.Submittable): unknown;
  readonly connection: { readonly parsedStatements: Record<string, string | undefined> };
}

/** A query as the ledger hands it to pg. */
export interface QueryConfig {
  readonly name?: string;
  readonly text: string;
  readonly values: unknown[];
  readonly types: unknown;
  readonly query_timeout: number;
}

// pg's own message writers, on the connection a query is submitted to.
interface Wire {
  parse(message: { text: string; name: string; types: readonly unknown[] }): void;
  bind(message: { portal: string; statement: string; values: readonly unknown[] }): void;
  execute(message: { portal: string; rows: number }): void;
}

type QueryClass = new (
  config: QueryConfig & { queryMode: 'extended'; callback: (error: Error | null, result: unknown) => void },
) => {
  prepare(connection: Wire): void;
};

/**
 * Holds the BEGINs of one pool client, for pg's `Query` class.
 *
 * @example
 * const begin = heldBegin(pg.Query);
 */
export function heldBegin(Query: typeof Pg.Query): HeldBegin {
  const Base = Query as unknown as QueryClass;
  // The statement's Bind, Describe, Execute and Sync follow the BEGIN's; the answers come back in
  // that order, the BEGIN's first.
  class AfterBegin extends Base {
    override prepare(connection: Wire): void {
      connection.parse({ text: 'begin', name: '', types: [] });
      connection.bind({ portal: '', statement: '', values: [] });
      connection.execute({ portal: '', rows: 0 });
      super.prepare(connection);
    }
  }
  let held = false;
  return {
    hold(text) {
      if (text === 'begin') {
        held = true;
        return { command: 'BEGIN', rowCount: null, rows: [] };
      }
      if (!held || (text !== 'commit' && text !== 'rollback')) return undefined;
      held = false;
      return { command: text.toUpperCase(), rowCount: null, rows: [] };
    },
    async query(client, config) {
      if (!held) return client.query(config);
      held = false;
      // pg takes every ParseComplete for the named statement's: one not prepared on this
      // connection yet is sent after its BEGIN, not with it (once per statement and connection).
      if (config.name !== undefined && client.connection.parsedStatements[config.name] === undefined) {
        await client.query({
          text: 'begin',
          values: [],
          types: config.types,
          query_timeout: config.query_timeout,
        });
        return client.query(config);
      }
      return new Promise((resolve, reject) => {
        // Extended even without values, so that the BEGIN goes in the same batch.
        const query = new AfterBegin({
          ...config,
          queryMode: 'extended',
          callback: (error, result) => (error ? reject(error) : resolve(statementResult(result))),
        });
        // pg's Query keeps no query_timeout of its own; pg reads it from the query it is given.
        client.query(
          Object.assign(query, { query_timeout: config.query_timeout }) as unknown as Pg.Submittable,
        );
      });
    },
    reset() {
      held = false;
    },
  };
}

/** pg answers both the BEGIN and the statement: the statement's is the last. */
function statementResult(result: unknown): unknown {
  return Array.isArray(result) ? result[result.length - 1] : result;
}
