import { createHash } from 'node:crypto';
import type Pg from 'pg';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { checkout } from './guards/pg-checkout.ts';
import { heldBegin, type QueryClient } from './pg-begin.ts';
import { unavailable, type Failure } from './error.ts';
import {
  NOTIFY_CHANNEL,
  type Ledger,
  type LedgerOptions,
  type PostgresLedgerPool,
  type PostgresTypes,
} from './ledger.ts';

// The pool's types live with the ledger's, below both this module and the checkout it uses.
export type { PostgresLedgerClient, PostgresLedgerPool, PostgresTypes } from './ledger.ts';
import { openLedger } from './open-ledger.ts';
import type { LedgerDatabase } from './schema.ts';

/**
 * Where the PostgreSQL ledger lives: a connection string (the ledger makes and closes its own
 * pool), or your `pg.Pool` (the ledger borrows connections and leaves the pool open).
 *
 * @example
 * const options: PostgresLedgerOptions = { connectionString: 'postgres://toolgate@db.internal/app' };
 */
export type PostgresLedgerOptions = LedgerOptions &
  ({ readonly connectionString: string } | { readonly pool: PostgresLedgerPool }) & {
    /**
     * How long the ledger waits for PostgreSQL to answer one query, or to hand out a connection, in
     * milliseconds (default 10 000). A network that goes silent without closing anything (packets
     * dropped) would otherwise hold a call for ever: past it the query fails with `LedgerError`
     * (`ledger_unavailable`), and its connection is dropped. It bounds each query of a transactional
     * tool too.
     */
    readonly queryTimeoutMs?: number;
  };

/** The type id of `int8` (bigint). */
const INT8 = 20;
const QUERY_TIMEOUT_MS = 10_000;

/**
 * Opens a ledger in a PostgreSQL database, through `pg` (an optional peer dependency: install it
 * to use this), and applies its migrations (once, however many app servers open it at the same
 * time). Several app servers may share the database: a call id is claimed by one of them, event
 * numbers are handed out in commit order across all of them, and each hears the others' commits
 * through LISTEN/NOTIFY.
 *
 * The ledger keeps one connection for LISTEN as long as it is open: a pool you pass needs room
 * for it beside your queries. `int8` columns read through the ledger's `db` and transactions come
 * back as JS numbers (as strings beyond 2^53, which the ledger's own columns never reach).
 *
 * Resolves once the database is ready; rejects with a `LedgerError` (`ledger_unavailable`) when
 * it cannot be reached.
 *
 * @example
 * const ledger = await postgresLedger({ connectionString: process.env.DATABASE_URL });
 * const shared = await postgresLedger({ pool: appPool });
 */
export async function postgresLedger(options: PostgresLedgerOptions): Promise<Ledger> {
  const pg = await loadDriver();
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const types: PostgresTypes = {
    getTypeParser: (oid, format) =>
      oid === INT8 ? readInt8 : (pg.types.getTypeParser(oid, format) as (value: string) => unknown),
  };
  const timeoutMs = options.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
  if (!(timeoutMs > 0))
    throw new RangeError(
      `queryTimeoutMs must be a positive number of milliseconds (got ${String(options.queryTimeoutMs)}).`,
    );
  let own: Pg.Pool | undefined;
  if ('connectionString' in options) {
    // Keepalive lets the system notice a peer that is gone while a connection idles in the pool.
    own = new pg.Pool({
      connectionString: options.connectionString,
      connectionTimeoutMillis: timeoutMs,
      keepAlive: true,
    });
    // A pooled connection that dies while idle (the server restarted) must not crash the process.
    own.on('error', onError);
  }
  const pool: PostgresLedgerPool = own ?? (options as { readonly pool: PostgresLedgerPool }).pool;
  const db = new Kysely<LedgerDatabase>({
    dialect: new PostgresDialect({
      pool: typedPool(pool, { types, timeoutMs, pg }, onError, async () => own && (await endPool(own))),
    }),
  });
  const feed = liveFeed(pool, onError, timeoutMs);

  try {
    await feed.start();
  } catch (error) {
    await db.destroy().catch(() => undefined);
    const failure = postgresFailure(error);
    throw failure ? unavailable(failure, error, 'opening') : error;
  }

  const pollMs = options.pollMs ?? 5000;
  return openLedger(
    {
      dialect: 'postgres',
      db,
      watch(wake) {
        feed.wake = wake;
        // A safety net under NOTIFY: a notification is lost if the listening connection drops.
        let last: number | undefined;
        let stopped = false;
        let reported = false;
        const poll = async () => {
          // The listening connection hears nothing when the network went silent: ask it something.
          feed.ping();
          try {
            const head = await db
              .selectFrom('toolgate_chain')
              .select('last_seq')
              .where('id', '=', 1)
              .executeTakeFirstOrThrow();
            if (last !== undefined && head.last_seq !== last && !stopped) wake();
            last = head.last_seq;
            reported = false;
          } catch (error) {
            if (stopped || reported) return;
            reported = true;
            onError(error);
          }
        };
        void poll();
        const timer = setInterval(() => void poll(), pollMs);
        timer.unref();
        return () => {
          stopped = true;
          clearInterval(timer);
          feed.wake = undefined;
        };
      },
      failure: postgresFailure,
      // A move never waits for the chain (it leaves its event pending when the chain is busy), so
      // writers may take the pool but for the live feed's connection and one for reads.
      writers: Math.max(1, poolSize(pool) - 2),
      async close() {
        await feed.close();
        await db.destroy();
      },
    },
    options,
  );
}

// The ledger's statements are a small fixed set (its moves, reads and chain, each in a few
// shapes), run thousands of times. Named, each is parsed and planned once per connection and then
// only bound and run: its text is not sent again (a third of what a call put on the wire) and
// PostgreSQL does not parse it again. Only statements on the ledger's own tables are named (the
// app's queries on the same pool stay as Kysely sends them), a name is the text's hash (two copies
// of this module sharing a pool agree on it), and past a bound texts run unnamed, so a connection
// never holds more than that many prepared statements. Long texts run unnamed too: they are the
// sequencer's larger batches, of many sizes, each seldom run again, and each a large plan for
// PostgreSQL to keep on every connection.
const NAMED_STATEMENTS = 256;
const NAMED_TEXT_MAX = 4096;
const statementNames = new Map<string, string>();

function statementName(text: string): string | undefined {
  const known = statementNames.get(text);
  if (
    known !== undefined ||
    statementNames.size >= NAMED_STATEMENTS ||
    text.length > NAMED_TEXT_MAX ||
    !text.includes('toolgate_')
  )
    return known;
  const name = `toolgate_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
  statementNames.set(text, name);
  return name;
}

/** The pool's `max` (pg's default 10 when it says none). */
function poolSize(pool: PostgresLedgerPool): number {
  const max = (pool as { options?: { max?: unknown } }).options?.max;
  return typeof max === 'number' && Number.isFinite(max) && max > 0 ? max : 10;
}

function readInt8(value: string): number | string {
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

// Hands Kysely the pool's clients with the ledger's type parsers on every query (so int8 reads as
// a number), without changing how the app's own queries on the same pool parse.
function typedPool(
  pool: PostgresLedgerPool,
  { types, timeoutMs, pg }: { types: PostgresTypes; timeoutMs: number; pg: typeof Pg },
  onError: (error: unknown) => void,
  end: () => Promise<void>,
): PostgresPool {
  const { Client, Query } = pg;
  return {
    async connect() {
      // A connection that breaks while the ledger holds it, between two queries or as it is handed
      // out, is reported here (pg would otherwise throw it as an unhandled 'error' event); the next
      // query then fails.
      const client = await checkout(pool, onError, timeoutMs);
      // pg's own clients send a transaction's BEGIN with its first statement; another pool's are sent each query as it comes.
      const begin = client instanceof Client ? heldBegin(Query) : undefined;
      // A query not answered in time leaves the connection waiting for that answer: nothing more
      // is sent on it (the rollback that follows fails at once), and it is dropped, not pooled.
      let silent: Error | undefined;
      const typed = {
        query: async (text: unknown, values?: readonly unknown[]) => {
          if (typeof text !== 'string') throw new Error('The ledger does not stream query results.');
          if (silent !== undefined) throw silent;
          const unsent = begin?.hold(text);
          if (unsent !== undefined) return unsent;
          try {
            const name = statementName(text);
            const config = {
              ...(name === undefined ? {} : { name }),
              text,
              // Kysely hands over an array of its own for each query.
              values: values === undefined ? [] : (values as unknown[]),
              types,
              query_timeout: timeoutMs,
            };
            return await (begin === undefined
              ? client.query(config)
              : begin.query(client as unknown as QueryClient, config));
          } catch (error) {
            silent = unanswered(timeoutMs, error) ?? silent;
            throw silent ?? error;
          }
        },
        release: (destroy?: boolean) => {
          begin?.reset();
          client.removeListener('error', onError);
          // A silent connection may still say something as it is torn down: it was reported already.
          if (silent !== undefined) client.on('error', () => undefined);
          client.release(destroy === true || silent !== undefined);
        },
      };
      return typed as unknown as PostgresPoolClient;
    },
    end,
  };
}

/**
 * The error to give for a query PostgreSQL did not answer within `ms` (pg's `query_timeout`, which
 * leaves the connection unusable), or `undefined` when `error` is any other failure.
 */
function unanswered(ms: number, error: unknown): Error | undefined {
  if (!(error instanceof Error) || !/query read timeout/i.test(error.message)) return undefined;
  return Object.assign(new Error(`no answer within ${ms} ms`, { cause: error }), { code: 'ETIMEDOUT' });
}

interface LiveFeed {
  wake: ((seq?: number) => void) | undefined;
  readonly start: () => Promise<void>;
  /** Asks the listening connection a question; one not answered in time is dropped and opened again. */
  readonly ping: () => void;
  /** Resolves once the listening connection is closed. */
  readonly close: () => Promise<void>;
}

// pg's pool.end() resolves before its sockets are closed; wait for them too, so that once close()
// resolves nothing of the ledger keeps the process alive.
async function endPool(pool: Pg.Pool): Promise<void> {
  let open = pool.totalCount;
  const closed = new Promise<void>((resolve) => {
    if (open === 0) resolve();
    pool.on('remove', () => {
      open -= 1;
      if (open === 0) resolve();
    });
  });
  await pool.end();
  await closed;
}

// One connection that LISTENs for appends from every app server. When it drops it is opened again,
// with a growing pause, and listeners are woken once it is back, as commits may have been missed.
function liveFeed(pool: PostgresLedgerPool, onError: (error: unknown) => void, timeoutMs: number): LiveFeed {
  let release: (() => Promise<void>) | undefined;
  let ask: (() => void) | undefined;
  let closed = false;
  let failures = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;

  // One reconnection at a time: a connection that fails as it starts is reported twice (its error
  // event, and its LISTEN failing), and two reconnections would open two listening connections,
  // one of which nobody would release.
  let reconnecting = false;
  const reconnect = () => {
    if (reconnecting || closed) return;
    reconnecting = true;
    retry = setTimeout(
      () => {
        retry = undefined;
        feed.start().then(
          () => {
            reconnecting = false;
            // Dropped again before it was in place: start over.
            if (release === undefined) return reconnect();
            failures = 0;
            feed.wake?.();
          },
          () => {
            reconnecting = false;
            failures += 1;
            reconnect();
          },
        );
      },
      Math.min(30_000, 250 * 2 ** failures),
    );
    retry.unref();
  };

  const feed: LiveFeed = {
    wake: undefined,
    ping: () => ask?.(),
    async start() {
      const on: { drop?: (error?: Error) => void } = {};
      const client = await checkout(pool, (error) => on.drop?.(error), timeoutMs);
      const ended = new Promise<void>((resolve) => client.on('end', resolve));
      let released = false;
      let asking = false;
      const releaseOnce = () => {
        if (!released) {
          released = true;
          if (release === releaseOnce) release = undefined;
          if (ask === pingOnce) ask = undefined;
          client.release(true);
        }
        return ended;
      };
      const pingOnce = () => {
        if (asking || released) return;
        asking = true;
        // LISTEN again: a no-op for PostgreSQL, and the connection still shows what it is for.
        client.query({ text: `listen ${NOTIFY_CHANNEL}`, query_timeout: timeoutMs }).then(
          () => void (asking = false),
          (error: unknown) => {
            asking = false;
            drop(unanswered(timeoutMs, error) ?? (error as Error));
          },
        );
      };
      const drop = (error?: Error) => {
        if (released) return;
        void releaseOnce();
        if (closed) return;
        if (error) onError(error);
        reconnect();
      };
      client.on('notification', (message) => {
        if (message.channel !== NOTIFY_CHANNEL) return;
        const seq = Number(message.payload);
        if (Number.isSafeInteger(seq)) feed.wake?.(seq);
        else feed.wake?.();
      });
      on.drop = drop;
      client.on('end', () => drop());
      try {
        await client.query({ text: `listen ${NOTIFY_CHANNEL}` });
      } catch (error) {
        void releaseOnce();
        throw error;
      }
      if (closed) void releaseOnce();
      else {
        release = releaseOnce;
        ask = pingOnce;
      }
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      ask = undefined;
      // A connection to a peer that went silent may never say it ended.
      const silent = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
      await Promise.race([release?.(), silent]);
    },
  };
  return feed;
}

async function loadDriver(): Promise<typeof Pg> {
  try {
    return (await import('pg')).default;
  } catch (error) {
    throw new Error(
      'postgresLedger needs the pg package: install it next to @toolgate/server (npm install pg).',
      { cause: error },
    );
  }
}

const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'PostgreSQL refused the connection (is it running, on that host and port?)',
  ECONNRESET: 'the connection to PostgreSQL broke',
  EPIPE: 'the connection to PostgreSQL broke',
  ETIMEDOUT: 'PostgreSQL did not answer in time',
  EHOSTUNREACH: 'the PostgreSQL host cannot be reached',
  ENETUNREACH: 'the PostgreSQL host cannot be reached',
  ENOTFOUND: 'the PostgreSQL host name does not resolve',
  EAI_AGAIN: 'the PostgreSQL host name does not resolve',
};

/**
 * Reads a `pg` error: a serialization failure or deadlock is worth retrying; a refused, broken or
 * timed-out connection, a server shutting down, out of connections, read-only, or a database
 * that does not exist means the ledger is unavailable. Constraint and SQL errors are bugs, not
 * outages, and are not translated.
 *
 * @example
 * postgresFailure(Object.assign(new Error('could not serialize access'), { code: '40001' })); // { kind: 'retry', ... }
 */
export function postgresFailure(error: unknown): Failure | undefined {
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const failure = postgresFailure(inner);
      if (failure) return failure;
    }
  }
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    const network = NETWORK[code];
    if (network) return { kind: 'unavailable', what: network };
    if (code === '40001')
      return { kind: 'retry', what: 'PostgreSQL could not serialize the transaction with a concurrent one' };
    if (code === '40P01') return { kind: 'retry', what: 'the transaction deadlocked with a concurrent one' };
    if (code === '3D000') return { kind: 'unavailable', what: 'the PostgreSQL database does not exist' };
    if (code === '25006') return { kind: 'unavailable', what: 'PostgreSQL is read-only (a standby?)' };
    if (code === '55P03')
      return { kind: 'unavailable', what: 'a lock in PostgreSQL was not granted in time' };
    if (code === '53300') return { kind: 'unavailable', what: 'PostgreSQL has no connection slots left' };
    if (code.startsWith('08')) return { kind: 'unavailable', what: 'the connection to PostgreSQL failed' };
    if (code.startsWith('28')) return { kind: 'unavailable', what: 'PostgreSQL refused the credentials' };
    if (code.startsWith('57'))
      return {
        kind: 'unavailable',
        what: 'PostgreSQL is shutting down, restarting, or cancelled the statement',
      };
    if (code.startsWith('53') || code.startsWith('58'))
      return { kind: 'unavailable', what: 'PostgreSQL ran out of resources' };
  }
  // FATAL ends the session: PostgreSQL would not start one, or stopped this one.
  const severity = (error as { severity?: unknown }).severity;
  if (severity === 'FATAL' || severity === 'PANIC')
    return { kind: 'unavailable', what: 'PostgreSQL refused or ended the session' };
  // pg's own words when a connection goes away or cannot be made in time.
  if (
    /Connection terminated|not queryable|timeout exceeded when trying to connect|Cannot use a pool after calling end/i.test(
      error.message,
    )
  ) {
    return { kind: 'unavailable', what: 'the connection to PostgreSQL broke or could not be made' };
  }
  return undefined;
}
