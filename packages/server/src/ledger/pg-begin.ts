import type Pg from 'pg';

/** What a query the connection did not need to send answers: no rows, as PostgreSQL would. */
export interface Unsent {
  readonly command: string;
  readonly rowCount: null;
  readonly rows: readonly [];
}

/**
 * A statement text that starts with this is its transaction's last: its COMMIT goes in the same
 * extended-protocol batch, after it and before the one Sync. PostgreSQL runs the COMMIT only if
 * the statement succeeded (after an error it skips to the Sync, and the transaction is rolled back
 * as before); the transaction's own COMMIT is then answered without being sent, and any further
 * statement in it is refused.
 *
 * @example
 * const text = `${THEN_COMMIT}update "toolgate_calls" set … where "id" = $1 and "version" = $2`;
 */
export const THEN_COMMIT = '/* then commit */ ';

/**
 * A connection's BEGIN, held back and sent with the transaction's first statement, and its COMMIT
 * sent with its last statement when that one says so ({@link THEN_COMMIT}): a one-statement move
 * is one write to the socket and one round trip instead of three each. Each of a move's
 * transactions pays a socket write per statement, which is much of a call's CPU where system calls
 * are costly. The BEGIN goes first in the same extended-protocol batch (before the one Sync), so
 * the transaction starts exactly as it would have, before the statement runs; a transaction that
 * sends nothing (its work threw before its first statement) sends neither its BEGIN nor its
 * ROLLBACK.
 *
 * @example
 * const begin = heldBegin(pg.Query);
 * const unsent = begin.hold('begin'); // { command: 'BEGIN', rowCount: null, rows: [] }, nothing sent
 * const result = await begin.query(client, config); // BEGIN and the statement, in one write
 */
export interface HeldBegin {
  /** Answers a BEGIN, or the end of a transaction that sent nothing or has committed already, without sending it. */
  readonly hold: (text: string) => Unsent | undefined;
  /** Sends `config` on `client`, with the held BEGIN in front of it and its COMMIT after it as asked; answers the statement's result. */
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
  execute(message: { portal: string; rows: number | undefined }): void;
  sync(): void;
}

type QueryClass = new (
  config: QueryConfig & { queryMode: 'extended'; callback: (error: Error | null, result: unknown) => void },
) => {
  readonly portal: string;
  prepare(connection: Wire): void;
  // pg ends a query's messages here: its Execute, then the Sync (or a Flush when reading by pages).
  _getRows(connection: Wire, rows: number | undefined): void;
};

/** An unnamed statement without values, as pg writes one in a batch: Parse, Bind, Execute. */
function unnamed(connection: Wire, text: string): void {
  connection.parse({ text, name: '', types: [] });
  connection.bind({ portal: '', statement: '', values: [] });
  connection.execute({ portal: '', rows: 0 });
}

/**
 * Holds the BEGINs of one pool client, for pg's `Query` class.
 *
 * @example
 * const begin = heldBegin(pg.Query);
 */
export function heldBegin(Query: typeof Pg.Query): HeldBegin {
  const Batched = batchedQuery(Query);
  let held = false;
  // The transaction committed with its last statement: PostgreSQL has no transaction open on it.
  let committed = false;
  return {
    hold(text) {
      if (text === 'begin') {
        held = true;
        committed = false;
        return unsent('BEGIN');
      }
      if (text !== 'commit' && text !== 'rollback') return undefined;
      // A ROLLBACK after the COMMIT went out (the work threw after its last statement) has
      // nothing left to undo: what the statement wrote is committed, and the error still stands.
      if (committed) {
        committed = false;
        return unsent(text.toUpperCase());
      }
      if (!held) return undefined;
      held = false;
      return unsent(text.toUpperCase());
    },
    async query(client, config) {
      if (committed)
        throw new Error(
          'The ledger’s transaction committed with what it said was its last statement: nothing more runs in it.',
        );
      const commits = config.text.startsWith(THEN_COMMIT);
      const begins = held;
      held = false;
      if (!begins && !commits) return client.query(config);
      // pg takes every ParseComplete for the named statement's: one not prepared on this
      // connection yet is sent after its BEGIN and before its COMMIT, not with them (once per
      // statement and connection).
      if (config.name !== undefined && client.connection.parsedStatements[config.name] === undefined) {
        if (begins) await alone(client, 'begin', config);
        const result = await client.query(config);
        if (commits) {
          await alone(client, 'commit', config);
          committed = true;
        }
        return result;
      }
      const result = await new Promise((resolve, reject) => {
        // Extended even without values, so that the BEGIN and COMMIT go in the same batch.
        const query = new Batched(
          {
            ...config,
            queryMode: 'extended',
            callback: (error, answers) =>
              error ? reject(error) : resolve(Array.isArray(answers) ? answers[begins ? 1 : 0] : answers),
          },
          begins,
          commits,
        );
        // pg's Query keeps no query_timeout of its own; pg reads it from the query it is given.
        client.query(
          Object.assign(query, { query_timeout: config.query_timeout }) as unknown as Pg.Submittable,
        );
      });
      committed = commits;
      return result;
    },
    reset() {
      held = false;
      committed = false;
    },
  };
}

const unsent = (command: string): Unsent => ({ command, rowCount: null, rows: [] });

/** A statement without values, sent on its own. */
const alone = (client: QueryClient, text: string, config: QueryConfig) =>
  client.query({ text, values: [], types: config.types, query_timeout: config.query_timeout });

const batchedQueries = new WeakMap<typeof Pg.Query, BatchedQuery>();

type BatchedQuery = new (
  config: ConstructorParameters<QueryClass>[0],
  begins: boolean,
  commits: boolean,
) => InstanceType<QueryClass>;

/**
 * pg's `Query` sending a held BEGIN before its statement and its COMMIT after it, as asked (made
 * once per `Query` class: a class made per connection would be a new shape for V8 each time).
 */
function batchedQuery(Query: typeof Pg.Query): BatchedQuery {
  const known = batchedQueries.get(Query);
  if (known !== undefined) return known;
  const Base = Query as unknown as QueryClass;
  // The statement's Bind, Describe and Execute follow the BEGIN's, and the COMMIT's follow them,
  // before the one Sync; the answers come back in that order.
  class Batched extends Base {
    constructor(
      config: ConstructorParameters<QueryClass>[0],
      private readonly begins: boolean,
      private readonly commits: boolean,
    ) {
      super(config);
    }

    override prepare(connection: Wire): void {
      if (this.begins) unnamed(connection, 'begin');
      super.prepare(connection);
    }

    override _getRows(connection: Wire, rows: number | undefined): void {
      if (!this.commits || rows) return super._getRows(connection, rows);
      connection.execute({ portal: this.portal, rows });
      unnamed(connection, 'commit');
      connection.sync();
    }
  }
  batchedQueries.set(Query, Batched);
  return Batched;
}
