import { createHash, randomUUID } from 'node:crypto';
import {
  ajvJsonSchema,
  canonicalJson,
  createToolRegistry,
  copyValue,
  createPending,
  createPipeline,
  isTerminal,
  messageOf,
  readProposal,
  refusal,
  resolveLimits,
  systemClock,
  toolResult,
  truncatedReason,
  type Clock,
  type JsonSchemaCompiler,
  type Limits,
  type LimitsOption,
  type MoveNote,
  type ProposalReading,
  type ProposalSource,
  type Reason,
  type RejectedCode,
  type SettledCall,
  type StreamGate,
  type ToolCallRecord,
  type ToolDefinition,
  type ToolProblem,
  type ToolRegistry,
  type ToolResultFormat,
  type ToolResultFormats,
} from '@toolgate/core';
import { refused, type Decision } from './decision.ts';
import { abortMessage, proposalSignal } from './abort-signal.ts';
import { scopedPrincipal, type ReadScope } from './read-scope.ts';
import { createTail, pushFeed, type LedgerMove } from '../feed/feed.ts';
import { createLedgerKeeper } from '../keeper/ledger-keeper.ts';
import type { Ledger, LedgerEvent } from '../ledger/ledger.ts';
import type { CallsTable } from '../ledger/schema.ts';
import { readRecord } from '../ledger/stored-record.ts';

/**
 * A session as `canSee` is asked about it: its id and its owner (the principal of its first
 * proposal).
 *
 * @example
 * canSee: (principal, session: SessionInfo) => principal === session.owner || admins.has(principal)
 */
export interface SessionInfo {
  readonly id: string;
  readonly owner: string;
}

/**
 * A call as `canApprove` is asked about it: the record, with its session and the session's owner.
 *
 * @example
 * canApprove: (principal, call: CallInfo) => call.owner === principal && call.record.name !== 'wire_money'
 */
export interface CallInfo {
  readonly record: ToolCallRecord;
  readonly session: string;
  readonly owner: string;
}

/**
 * What {@link createServerGate} takes.
 *
 * @example
 * const options: ServerGateOptions = { tools: [charge], ledger: await sqliteLedger({ path: 'toolgate.db' }) };
 */
export interface ServerGateOptions {
  /** The same `defineTool` objects the browser imports. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly tools: readonly ToolDefinition<any, any, any>[];
  readonly ledger: Ledger;
  /** Whether a principal may see a session's calls (default: only its owner). */
  readonly canSee?: (principal: string, session: SessionInfo) => boolean | Promise<boolean>;
  /** Whether a principal may approve or deny a call it can see (default: the session's owner). */
  readonly canApprove?: (principal: string, call: CallInfo) => boolean | Promise<boolean>;
  /** How long a call waits for a person before it is cancelled with `approval_expired` (default 24 h). */
  readonly approvalTtlMs?: number;
  /** How long a claim on a running call lasts without renewal (default 30 s); renewed every third of it. */
  readonly leaseMs?: number;
  readonly limits?: LimitsOption;
  /** Compiles JSON Schemas (default: Ajv). */
  readonly jsonSchema?: JsonSchemaCompiler;
  /** Receives errors that reach no caller (a database error while a tool's lease is renewed, say). Default: `console.error`. */
  readonly onError?: (error: unknown) => void;
  readonly clock?: Clock;
  /** Names this process in the ledger's leases (default: a random id). */
  readonly instance?: string;
  /** Makes ids for calls that arrive without one (default: a random UUID). */
  readonly generateId?: () => string;
  /** Run `recover()` on start and every `leaseMs` (default true). */
  readonly recover?: boolean;
}

/**
 * Per-call options for the server gate's `propose` and `run`.
 *
 * @example
 * await serverGate.propose(toolCall, { session: conversation.id, principal: user.id });
 */
export interface ServerProposeOptions {
  /** The conversation the call belongs to; the principal of its first proposal owns it. */
  readonly session: string;
  /** Who the model is acting for (the authenticated user's id). */
  readonly principal: string;
  readonly id?: string;
  readonly turn?: string;
  /**
   * Aborting it before the call ends cancels the call (`user_cancelled`, with the signal's reason
   * when it gives one) and aborts a running tool's `ctx.signal`; after the call has ended it does
   * nothing. Already aborted when proposed: the call is stored `cancelled` and neither checked nor
   * run (an id the ledger holds that has not ended is cancelled).
   */
  readonly signal?: AbortSignal;
}

/**
 * What `serverGate.turn` takes: who the model acts for, in which session, and the turn's id.
 *
 * @example
 * const reader = readOpenAIChatStream(serverGate.turn({ session: chat.id, principal: user.id, turn: completion.id }));
 */
export type TurnOptions = Omit<ServerProposeOptions, 'id'>;

/**
 * A server gate seen by a stream reader for one turn; see `serverGate.turn`.
 *
 * @example
 * const view: TurnGate = serverGate.turn({ session, principal });
 */
export type TurnGate = StreamGate;

/**
 * What `recover()` did.
 *
 * @example
 * const { rerun, interrupted, expired } = await serverGate.recover();
 */
export interface Recovery {
  /** Calls re-run with their idempotency key (idempotent or transactional tools). */
  readonly rerun: readonly string[];
  /** Calls ended `failed` / `interrupted`: their tool may or may not have taken effect. */
  readonly interrupted: readonly string[];
  /** Approvals that ran out, cancelled with `approval_expired`. */
  readonly expired: readonly string[];
}

/**
 * The gate where authority lives: every call is decided again with the same tool definitions,
 * each move is a transaction in the ledger, a call id runs at most once across retries, crashes
 * and app servers, and approvals are bound to the input the person saw.
 *
 * @example
 * const gate: ServerGate = createServerGate({ tools, ledger });
 * const call = await gate.run(toolCall, { session, principal });
 */
export interface ServerGate {
  /**
   * Reads, checks and starts a call; resolves once it is waiting for a person, running, or ended.
   * Never rejects for model input: a proposal it cannot accept is a `rejected` record. The same id
   * again (on any instance) answers the same call; with other arguments, a `rejected` record with
   * `id_conflict` that is not stored. Rejects only when the ledger can't be used (a `LedgerError`):
   * then nothing was half-moved, and proposing the same id again is safe.
   */
  readonly propose: (input: unknown, options: ServerProposeOptions) => Promise<ToolCallRecord>;
  /** `propose`, then `settled`. */
  readonly run: (input: unknown, options: ServerProposeOptions) => Promise<SettledCall>;
  /**
   * Resolves once the call has ended (here or on another instance); `undefined` for an unknown id.
   * With `{ principal }`, also `undefined` (at once) for a call that principal may not see. Without
   * it, it answers any call to anyone: for trusted server code only, never with an id a client sent.
   */
  readonly settled: (id: string, scope?: ReadScope) => Promise<SettledCall | undefined>;
  /**
   * The call as the ledger holds it now; `undefined` for an unknown id. With `{ principal }`, also
   * `undefined` for a call that principal may not see (as `calls()` decides). Without it, it answers
   * any call to anyone: for trusted server code only, never with an id a client sent.
   */
  readonly get: (id: string, scope?: ReadScope) => Promise<ToolCallRecord | undefined>;
  /** Runs a call that awaits approval, if `inputHash` is the hash of the input it holds. */
  readonly approve: (id: string, options: { readonly principal: string; readonly inputHash: string }) => Promise<Decision>;
  readonly deny: (id: string, options: { readonly principal: string; readonly reason?: string }) => Promise<Decision>;
  readonly cancel: (id: string, options: { readonly principal: string; readonly reason?: string }) => Promise<Decision>;
  /** The session's calls, oldest first, if the principal may see the session; otherwise none. */
  readonly calls: (session: string, principal: string) => Promise<ToolCallRecord[]>;
  /** The session's calls as of ledger event `seq`, for a feed that then follows from `seq`. */
  readonly snapshot: (session: string, principal: string) => Promise<{ readonly seq: number; readonly calls: ToolCallRecord[] }>;
  /** Whether the principal may see the session (a session nobody has proposed into yet: yes). */
  readonly canSee: (session: string, principal: string) => Promise<boolean>;
  /**
   * The session's events the principal may see: every one after `after` (`0`: from the start),
   * then live ones; without `after`, live ones only. Ends when the consumer stops or the gate closes.
   */
  readonly events: (session: string, options: { readonly principal: string; readonly after?: number }) => AsyncIterableIterator<LedgerEvent>;
  /** `events`, each with the record as it was right after the move. */
  readonly moves: (session: string, options: { readonly principal: string; readonly after?: number }) => AsyncIterableIterator<LedgerMove>;
  /**
   * What to send back to the model for one settled call, in a provider's format. With
   * `{ principal }`, a call that principal may not see is refused exactly as an unknown id is.
   */
  readonly toolResult: <F extends ToolResultFormat>(id: string, format: F, scope?: ReadScope) => Promise<ToolResultFormats[F]>;
  /**
   * The gate a provider's stream reader takes, for one assistant turn: calls open as the model names
   * them and go to the ledger as their arguments complete, exactly as `propose` would send them.
   */
  readonly turn: (options: TurnOptions) => TurnGate;
  /** Settles calls a process that died left open, and approvals that ran out. */
  readonly recover: () => Promise<Recovery>;
  /** Walks the audit chain and names the first event changed, removed or inserted. */
  readonly verify: Ledger['verify'];
  /** Stops this gate's timers and feeds (the ledger stays open: close it with `ledger.close()`). */
  readonly close: () => Promise<void>;
  /**
   * Compiles every tool's schemas (each is otherwise compiled on its tool's first call) and lists
   * the tools whose schemas do not compile; a call of such a tool is rejected with `tool_unavailable`.
   */
  readonly check: () => readonly ToolProblem[];
  /** The registered tools, in the order given (for a provider's tool definitions). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly tools: readonly ToolDefinition<any, any, any>[];
  /**
   * Replaces the tools: later proposals (turn views made before included) see the new set, and
   * `tools` lists it. A call proposed before keeps the definition it was proposed with in this
   * process, for its approval, its run and its result; another process runs a call with its own
   * tool of that name. Throws, and changes nothing, when two tools share a name.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly replaceTools: (tools: readonly ToolDefinition<any, any, any>[]) => void;
  readonly limits: Limits;
}

const DAY = 24 * 60 * 60 * 1000;

/** A proposal as read, or as a stream reader closed it (a truncated call is refused as read). */
type Reading = ProposalReading | { readonly ok: false; readonly reason: Reason<RejectedCode>; readonly id?: string; readonly name?: string; readonly source: ProposalSource };
const RECOVERY: MoveNote = { actor: 'toolgate:recovery' };
const TIMEKEEPER: MoveNote = { actor: 'toolgate:expiry' };

/**
 * Creates the server gate over a ledger.
 *
 * @example
 * const ledger = await sqliteLedger({ path: './toolgate.db' });
 * const gate = createServerGate({ tools: [charge, transfer], ledger });
 * const call = await gate.run(toolCall, { session: chat.id, principal: user.id });
 * messages.push(await gate.toolResult(call.id, 'openai-chat'));
 */
export function createServerGate(options: ServerGateOptions): ServerGate {
  const { ledger } = options;
  const clock = options.clock ?? systemClock;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const limits: Limits = resolveLimits(options.limits);
  const leaseMs = positive('leaseMs', options.leaseMs ?? 30_000);
  const approvalTtlMs = positive('approvalTtlMs', options.approvalTtlMs ?? DAY);
  const instance = options.instance ?? `toolgate:${randomUUID()}`;
  const generateId = options.generateId ?? (() => randomUUID());
  const canSeeSession = options.canSee ?? ((principal, session) => principal === session.owner);
  const canApprove = options.canApprove ?? ((principal, call) => principal === call.owner);

  const compileJson = options.jsonSchema ?? ajvJsonSchema;
  let tools = options.tools;
  let registry = createToolRegistry(tools, compileJson, 'createServerGate');
  // The tool set each call proposed here was proposed under, until it ends: replaceTools changes
  // what later proposals see, never what an earlier one was checked, approved and run with.
  const pinned = new Map<string, ToolRegistry>();
  const pin = (id: string) => {
    pinned.delete(id);
    pinned.set(id, registry);
    if (pinned.size > 10_000) pinned.delete(pinned.keys().next().value as string);
  };
  const entry = (name: string, id?: string) => ((id === undefined ? undefined : pinned.get(id)) ?? registry).entry(name);

  /**
   * Callers waiting for a call to reach a resting point (`propose`), or to end (`settled`). A
   * resting waiter gets `undefined` when another instance wrote the call first: it reads that one.
   */
  const resting = new Map<string, { resolve: (call: ToolCallRecord | undefined) => void; reject: (error: unknown) => void }[]>();
  const endings = new Map<string, ((call: SettledCall) => void)[]>();

  const keeper = createLedgerKeeper({
    ledger,
    clock,
    leaseMs,
    approvalTtlMs,
    instance,
    onError,
    newKey: () => randomUUID(),
    transactional: (name, id) => entry(name, id)?.tool.transactional === true,
    onMoveFailed(id, error) {
      const waiting = resting.get(id);
      if (waiting === undefined) return onError(error);
      resting.delete(id);
      for (const { reject } of waiting) reject(error);
    },
    onTaken(id) {
      const waiting = resting.get(id);
      resting.delete(id);
      for (const { resolve } of waiting ?? []) resolve(undefined);
    },
    onLeaseLost: (id) => void pipeline.stop(id, new DOMException('This process lost its claim on the call.', 'AbortError')),
  });
  keeper.onMoved((call) => {
    if (call.status === 'pending' || call.status === 'validated') return;
    // An ending this process wrote settles its waiters at once; the tail brings the others' endings.
    if (isTerminal(call.status)) {
      pinned.delete(call.id);
      settle(call as SettledCall);
    }
    const waiting = resting.get(call.id);
    if (waiting === undefined) return;
    resting.delete(call.id);
    for (const { resolve } of waiting) resolve(call);
  });
  // Calls this process ended lately, so that `settled` right after the end needs no read.
  const recent = new Map<string, SettledCall>();
  function settle(call: SettledCall): void {
    recent.delete(call.id);
    recent.set(call.id, call);
    if (recent.size > 1000) recent.delete(recent.keys().next().value as string);
    const waiting = endings.get(call.id);
    if (waiting === undefined) return;
    endings.delete(call.id);
    for (const resolve of waiting) resolve(call);
  }

  const pipeline = createPipeline({
    limits,
    clock,
    onError,
    entry,
    toolNames: () => registry.names,
    keeper,
    state: () => undefined,
  });

  const tail = createTail(ledger, onError);
  // One subscription settles waiters and stops local runs that another instance ended.
  let stopFollowing: (() => void) | undefined;
  let following: Promise<number> | undefined;
  // Once following, the gate follows until it closes: restarting the tail for each call would read
  // the ledger's head each time, and a call this process runs needs every ending after its claim.
  let tailLive = false;
  const follow = () => {
    if (stopFollowing !== undefined) return;
    const subscription = tail.subscribe((moves) => {
      for (const { event, record } of moves) {
        // Another process took over a call this one runs: look whether the claim is still ours.
        if (event.reason?.code === 'recovered' && keeper.claims.has(record.id) && pipeline.running(record.id)) recheck(record.id);
        if (!isTerminal(event.to) || event.from === event.to) continue;
        pinned.delete(record.id);
        if (pipeline.running(record.id) && keeper.claims.has(record.id) && event.from === 'executing') {
          void pipeline.stop(record.id, new DOMException(record.reason?.message ?? 'The call ended elsewhere.', 'AbortError'));
          keeper.release(record.id);
        }
        settle(record as SettledCall);
      }
    });
    stopFollowing = subscription.stop;
    following = subscription.from;
    tailLive = false;
    void following.then(() => {
      if (stopFollowing === subscription.stop) tailLive = true;
    }, () => undefined);
    // A tail that could not start (the ledger was out of reach) is let go: the next waiter starts it again.
    following.catch(() => stopFollowing === subscription.stop && unfollow());
  };
  const unfollow = () => {
    stopFollowing?.();
    stopFollowing = undefined;
    tailLive = false;
  };
  /**
   * Follows a call this process runs, so that an ending committed elsewhere (a cancel, a takeover)
   * stops its tool. Once the tail is reading, the call is looked at once more: an ending committed
   * before the tail's first read would otherwise only be noticed at the next lease renewal.
   */
  const guard = (id: string) => {
    // A tail already live before the claim delivers every ending after it; one that starts now may
    // have started past an ending, so the call is looked at once it runs.
    if (tailLive) return;
    follow();
    void following?.then(() => recheck(id), onError);
  };
  /** Stops this process's run of a call whose claim has passed to another process, or ended. */
  const recheck = (id: string) => {
    const claim = keeper.claims.get(id);
    if (claim === undefined) return;
    ledger
      .read((db) => db.selectFrom('toolgate_calls').select(['status', 'fence']).where('id', '=', id).executeTakeFirst())
      .then((row) => {
        if (keeper.claims.get(id) !== claim || (row?.status === 'executing' && row.fence === claim.fence)) return;
        void pipeline.stop(id, new DOMException('Another process has taken this call over, or it ended elsewhere.', 'AbortError'));
        keeper.release(id);
      })
      .catch(onError);
  };

  function untilResting(id: string): Promise<ToolCallRecord | undefined> {
    return new Promise((resolve, reject) => {
      const list = resting.get(id) ?? [];
      list.push({ resolve, reject });
      resting.set(id, list);
    });
  }

  // A session's owner never changes once written, so it is read from the ledger once per process.
  const owners = new Map<string, string>();
  /** The session's owner; with `principal`, a session nobody owns yet becomes theirs. */
  async function sessionOwner(session: string, principal?: string): Promise<string | undefined> {
    const known = owners.get(session);
    if (known !== undefined) return known;
    const read = () => ledger.read((db) => db.selectFrom('toolgate_sessions').select('owner').where('id', '=', session).executeTakeFirst());
    let row = await read();
    if (row === undefined && principal !== undefined) {
      await ledger.transaction((trx) =>
        trx
          .insertInto('toolgate_sessions')
          .values({ id: session, owner: principal, created_at: clock.now() })
          .onConflict((conflict) => conflict.column('id').doNothing())
          .execute(),
      );
      row = await read();
    }
    if (row !== undefined) {
      if (owners.size >= 10_000) owners.delete(owners.keys().next().value as string);
      owners.set(session, row.owner);
    }
    return row?.owner;
  }

  async function mayView(principal: string, session: string, owner: string | undefined): Promise<boolean> {
    if (owner === undefined) return true; // nothing to see yet; every event is checked as it comes
    try {
      return (await canSeeSession(principal, { id: session, owner })) === true;
    } catch (error) {
      onError(error);
      return false;
    }
  }

  function readInput(input: unknown): ProposalReading {
    try {
      return readProposal(input, limits);
    } catch (error) {
      return { ok: false, source: 'normalised', reason: { code: 'invalid_shape', message: `the proposal could not be read: ${messageOf(error)}` } };
    }
  }

  const propose = (input: unknown, proposeOptions: ServerProposeOptions) => proposeReading(readInput(input), checkProposeOptions(proposeOptions));

  /** Proposes a reading; with a signal, an abort before the call ends cancels it. */
  async function proposeReading(reading: Reading, proposeOptions: ServerProposeOptions): Promise<ToolCallRecord> {
    const signal = proposalSignal('serverGate.propose', proposeOptions.signal);
    if (signal === undefined) return submit(reading, proposeOptions);
    const said = reading.ok ? reading.proposal.id : reading.id;
    const id = proposeOptions.id ?? said ?? generateId();
    const { principal } = proposeOptions;
    let cancelling: Promise<unknown> | undefined;
    const onAbort = () => {
      cancelling ??= (async () => {
        // An abort that races the call's end changes nothing, not even the audit trail.
        const now = recent.get(id) ?? (await get(id));
        if (now === undefined || !isTerminal(now.status)) await cancel(id, { principal, reason: abortMessage(signal) });
      })().catch(onError);
    };
    const detach = () => signal.removeEventListener('abort', onAbort);
    // An aborted signal never fires: `submit` cancels a new call itself, and a known one is cancelled below.
    signal.addEventListener('abort', onAbort, { once: true });
    let call: ToolCallRecord;
    try {
      call = await submit(reading, { ...proposeOptions, id }, { generated: proposeOptions.id === undefined && said === undefined, signal });
    } catch (error) {
      detach();
      throw error;
    }
    if (isTerminal(call.status)) {
      detach();
      return call;
    }
    if (signal.aborted) {
      detach();
      onAbort();
      await cancelling;
      return (await get(id)) ?? call;
    }
    settledCall(id).then(detach, detach);
    return call;
  }

  /** Proposes what was read from a proposal (or what a stream reader assembled). */
  async function submit(reading: Reading, proposeOptions: ServerProposeOptions, how: { readonly generated?: boolean; readonly signal?: AbortSignal } = {}): Promise<ToolCallRecord> {
    const { session, principal } = proposeOptions;
    const said = reading.ok ? reading.proposal.id : reading.id;
    const id = proposeOptions.id ?? said ?? generateId();
    const proposalHash = hashProposal(reading, limits);

    // A known id is answered without a second check: a draft beside a stored call of the same id
    // would take the moves (a commit, a cancel) meant for the stored one.
    const known = await keeper.read(id);
    const unauthorized = () => localRejection(id, reading, { code: 'unauthorized', message: `"${principal}" may not propose calls in session "${session}"` });
    if (known !== undefined) {
      // Answered exactly as a new id in that session would be: the refusal shows nothing of the call.
      if (!(await mayView(principal, session, await sessionOwner(session)))) return unauthorized();
      return answerKnown(id, known.draft ? ((await untilResting(id).catch(() => undefined)) ?? known.record) : known.record, proposalHash, session, principal, reading);
    }

    const owner = (await sessionOwner(session, principal)) ?? principal;
    if (!(await mayView(principal, session, owner))) return unauthorized();
    const name = reading.ok ? reading.proposal.name : (reading.name ?? '');
    const source = reading.ok ? reading.proposal.source : reading.source;
    const record = createPending({ id, name, source, generatedId: how.generated ?? (proposeOptions.id === undefined && said === undefined), turn: proposeOptions.turn, at: clock.now() });
    if (keeper.drafts.has(id)) return answerKnown(id, (await untilResting(id).catch(() => undefined)) ?? record, proposalHash, session, principal, reading);
    pin(id);
    keeper.draft({ record, session, owner, proposalHash, moves: [{ from: undefined, to: record, actor: principal }] });
    const rest = untilResting(id);
    const note: MoveNote = { actor: principal };
    if (how.signal?.aborted === true) void keeper.move(id, { type: 'cancel', reason: { code: 'user_cancelled', message: abortMessage(how.signal) } }, note);
    else if (!reading.ok) pipeline.reject(id, reading.reason, note);
    else pipeline.resolve(id, name, reading.proposal.arguments, reading.proposal.truncated === true, [], note);
    const call = await rest;
    // Another instance wrote this id first: answer as for an id proposed again.
    if (call === undefined) return answerKnown(id, record, proposalHash, session, principal, reading);
    if (call.status === 'executing') guard(id);
    return call;
  }

  /**
   * One assistant turn's calls as a stream reader sees them: opened as the model names them,
   * previewed here, and proposed to the ledger as each one's arguments complete.
   */
  function turn(turnOptions: TurnOptions): TurnGate {
    const { session, principal } = checkProposeOptions(turnOptions);
    const signal = proposalSignal('serverGate.turn', turnOptions.signal);
    const records = new Map<string, ToolCallRecord>();
    const answers = new Map<string, Promise<ToolCallRecord>>();
    const opened = new Map<string, { readonly name: string; readonly source: ProposalSource }>();
    let stopWatching: (() => void) | undefined;
    const watch = () => {
      stopWatching ??= keeper.onMoved((call) => {
        if (records.has(call.id)) records.set(call.id, call);
      });
    };
    const unwatchWhenDone = () => {
      for (const record of records.values()) if (!isTerminal(record.status)) return;
      stopWatching?.();
      stopWatching = undefined;
    };
    const send = (id: string, reading: Reading, turnId: string | undefined): ToolCallRecord => {
      watch();
      const answer = proposeReading(reading, { session, principal, id, ...(turnId === undefined ? {} : { turn: turnId }), ...(signal === undefined ? {} : { signal }) });
      answers.set(id, answer);
      answer.then(
        (record) => {
          const now = records.get(id);
          if (now === undefined || !isTerminal(now.status)) records.set(id, record);
          unwatchWhenDone();
        },
        (error: unknown) => {
          onError(error);
          unwatchWhenDone();
        },
      );
      return records.get(id) as ToolCallRecord;
    };
    const local = (id: string, name: string, source: ProposalSource, turnId: string | undefined, generated: boolean): ToolCallRecord => {
      const record = createPending({ id, name, source, generatedId: generated, turn: turnId, at: clock.now() });
      records.set(id, record);
      return record;
    };
    return {
      get tools() {
        return tools;
      },
      limits,
      propose(input, proposeOptions) {
        const reading = readInput(input);
        const said = reading.ok ? reading.proposal.id : reading.id;
        const id = proposeOptions?.id ?? said ?? generateId();
        const known = records.get(id);
        if (known !== undefined) return known;
        const turnId = proposeOptions?.turn ?? turnOptions.turn;
        local(id, reading.ok ? reading.proposal.name : (reading.name ?? ''), reading.ok ? reading.proposal.source : reading.source, turnId, said === undefined && proposeOptions?.id === undefined);
        return send(id, reading, turnId);
      },
      get: (id) => records.get(id),
      async settled(id) {
        const answer = answers.get(id);
        const now = records.get(id);
        if (answer === undefined) {
          if (now !== undefined && isTerminal(now.status)) return now as SettledCall;
          throw new Error(`turn.settled: call "${id}" was not proposed in this turn.`);
        }
        const first = await answer;
        if (isTerminal(first.status)) return first as SettledCall;
        const done = await settled(id);
        if (done !== undefined) records.set(id, done);
        return done ?? (first as SettledCall);
      },
      cancel(id, reason) {
        const now = records.get(id);
        if (now === undefined || isTerminal(now.status)) return false;
        const answer = answers.get(id);
        if (answer === undefined) {
          // Opened by the stream but never proposed: it ends here, and nothing of it reaches the ledger.
          const at = clock.now();
          const why = { code: 'user_cancelled', message: textOf(reason, 'the user cancelled this call') } as const;
          records.set(id, { ...now, status: 'cancelled', reason: why, preview: undefined, history: [...now.history, { status: 'cancelled', at, reason: why }], updatedAt: at } as ToolCallRecord);
          return true;
        }
        void answer.then(() => cancel(id, reason === undefined ? { principal } : { principal, reason })).catch(onError);
        return true;
      },
      stream: {
        open(init) {
          const id = init.id ?? generateId();
          const known = records.get(id);
          if (known !== undefined) return known;
          opened.set(id, { name: init.name, source: init.source });
          return local(id, init.name, init.source, init.turn ?? turnOptions.turn, init.id === undefined);
        },
        preview(id, preview) {
          const now = records.get(id);
          if (now?.status === 'pending' && !answers.has(id)) records.set(id, { ...now, preview });
        },
        close(id, rawArguments) {
          const call = opened.get(id);
          const now = records.get(id);
          if (call === undefined || now === undefined || answers.has(id) || now.status !== 'pending') return now;
          return send(id, { ok: true, proposal: { id, name: call.name, arguments: rawArguments, source: call.source } }, now.turn);
        },
        truncate(id, message) {
          const call = opened.get(id);
          const now = records.get(id);
          if (call === undefined || now === undefined || answers.has(id) || now.status !== 'pending') return now;
          return send(id, { ok: false, reason: truncatedReason(message), id, name: call.name, source: call.source }, now.turn);
        },
        refuse(id, reason) {
          const call = opened.get(id);
          const now = records.get(id);
          if (call === undefined || now === undefined || answers.has(id) || now.status !== 'pending') return now;
          return send(id, { ok: false, reason: refusal(reason), id, name: call.name, source: call.source }, now.turn);
        },
      },
    };
  }

  /** The same id again: the same call, or a refusal when it carries other arguments. */
  async function answerKnown(id: string, record: ToolCallRecord, proposalHash: string, session: string, principal: string, reading: Reading): Promise<ToolCallRecord> {
    const stored = await ledger.read((db) => db.selectFrom('toolgate_calls').selectAll().where('id', '=', id).executeTakeFirst());
    if (stored === undefined) return record;
    if (stored.proposal_hash === proposalHash && stored.session === session) return readRecord(stored.record);
    const message =
      stored.session === session
        ? `call id "${id}" was already used for another call (other arguments); a call id names one call`
        : `call id "${id}" was already used in another session; a call id names one call`;
    await ledger.transaction(async (trx) => {
      const row = await keeper.lock(trx, id);
      if (row !== undefined) await keeper.refuse(trx, row, principal, 'id_conflict', message);
    });
    // Of a call in another session the refusal shows only what the proposal itself said.
    const shown = stored.session === session ? readRecord(stored.record) : localRejection(id, reading, { code: 'unauthorized', message });
    return conflictRecord(shown, message, clock.now());
  }

  function localRejection(id: string, reading: Reading, reason: { code: 'unauthorized'; message: string }): ToolCallRecord {
    const name = reading.ok ? reading.proposal.name : (reading.name ?? '');
    const source = reading.ok ? reading.proposal.source : reading.source;
    const at = clock.now();
    const pending = createPending({ id, name, source, generatedId: false, turn: undefined, at });
    return { ...pending, status: 'rejected', reason, history: [...pending.history, { status: 'rejected', at, reason }] } as ToolCallRecord;
  }

  async function get(id: string, scope?: ReadScope): Promise<ToolCallRecord | undefined> {
    const principal = scopedPrincipal('serverGate.get', scope);
    const found = await keeper.read(id);
    if (found === undefined || principal === undefined) return found?.record;
    return (await mayView(principal, found.session, found.owner)) ? found.record : undefined;
  }

  async function settled(id: string, scope?: ReadScope): Promise<SettledCall | undefined> {
    const principal = scopedPrincipal('serverGate.settled', scope);
    if (principal !== undefined && (await get(id, { principal })) === undefined) return undefined;
    return settledCall(id);
  }

  async function settledCall(id: string): Promise<SettledCall | undefined> {
    const ended = recent.get(id);
    if (ended !== undefined) return ended;
    let resolveWaiter!: (call: SettledCall) => void;
    const waiting = new Promise<SettledCall>((resolve) => {
      resolveWaiter = resolve;
      const list = endings.get(id) ?? [];
      list.push(resolve);
      endings.set(id, list);
    });
    // A call this process runs ends here (its waiters are settled by the move) or, if another
    // process ends it, on the live tail, which has followed since before the claim.
    if (keeper.claims.has(id) && tailLive) return waiting;
    follow();
    // Read the call once the tail follows: a move after `following` reaches the waiter, the read sees the rest.
    await following;
    const known = await get(id);
    if (known === undefined || isTerminal(known.status)) {
      const list = endings.get(id)?.filter((resolve) => resolve !== resolveWaiter);
      if (list === undefined || list.length === 0) endings.delete(id);
      else endings.set(id, list);
      return known as SettledCall | undefined;
    }
    return waiting;
  }

  /** Reads a call for a decision and checks that the principal may see it. */
  async function forDecision(id: string, principal: unknown): Promise<{ row: CallsTable; info: CallInfo } | Decision> {
    if (typeof principal !== 'string' || principal === '') return refused('forbidden', 'no principal: only an authenticated user can decide a call');
    const row = await ledger.read((db) => db.selectFrom('toolgate_calls').selectAll().where('id', '=', id).executeTakeFirst());
    if (row === undefined) return refused('not_found');
    if (!(await mayView(principal, row.session, row.owner))) {
      await audit(id, principal, 'forbidden', `"${principal}" may not see session "${row.session}"`);
      return refused('not_found');
    }
    return { row, info: { record: readRecord(row.record), session: row.session, owner: row.owner } };
  }

  async function audit(id: string, principal: string, code: Parameters<typeof keeper.refuse>[3], message: string): Promise<void> {
    await ledger.transaction(async (trx) => {
      const row = await keeper.lock(trx, id);
      if (row !== undefined) await keeper.refuse(trx, row, principal, code, message);
    });
  }

  async function mayDecide(principal: string, info: CallInfo): Promise<boolean> {
    try {
      return (await canApprove(principal, info)) === true;
    } catch (error) {
      onError(error);
      return false;
    }
  }

  /** Refuses inside the transaction that found the reason, so the refusal is in the audit trail. */
  async function refuseIn(trx: Parameters<typeof keeper.refuse>[0], row: CallsTable, principal: string, decision: Decision & { ok: false }): Promise<Decision> {
    await keeper.refuse(trx, row, principal, decision.code, decision.message);
    return decision;
  }

  function notAwaiting(status: string): Decision & { ok: false } {
    return (isTerminal(status as ToolCallRecord['status']) ? refused('settled') : refused('not_awaiting', `the call is ${status}, not waiting for approval`)) as Decision & { ok: false };
  }

  async function expire(trx: Parameters<typeof keeper.refuse>[0], row: CallsTable, actor: string): Promise<ToolCallRecord | undefined> {
    await trx.updateTable('toolgate_approvals').set({ decision: 'expired', decided_at: clock.now() }).where('call_id', '=', row.id).where('decision', 'is', null).execute();
    return keeper.moveIn(trx, row, { type: 'cancel', reason: { code: 'approval_expired', message: 'nobody approved this call in time' } } as never, actor);
  }

  async function approve(id: string, { principal, inputHash }: { readonly principal: string; readonly inputHash: string }): Promise<Decision> {
    const found = await forDecision(id, principal);
    if ('ok' in found) return found;
    if (!(await mayDecide(principal, found.info))) {
      await audit(id, principal, 'forbidden', `"${principal}" may not approve this call`);
      return refused('forbidden');
    }
    const outcome = await keeper.exclusive(id, () =>
      ledger.transaction(async (trx): Promise<{ decision: Decision; started?: ToolCallRecord }> => {
        const row = await keeper.lock(trx, id);
        if (row === undefined) return { decision: refused('not_found') };
        if (row.status !== 'awaiting_approval') return { decision: await refuseIn(trx, row, principal, notAwaiting(row.status)) };
        const approval = await trx.selectFrom('toolgate_approvals').selectAll().where('call_id', '=', id).executeTakeFirst();
        if (approval === undefined || approval.decision !== null) return { decision: await refuseIn(trx, row, principal, notAwaiting(row.status)) };
        if (clock.now() >= approval.expires_at) {
          await keeper.refuse(trx, row, principal, 'expired', 'the approval came after it had expired');
          await expire(trx, row, principal);
          return { decision: refused('expired') };
        }
        if (typeof inputHash !== 'string' || inputHash !== approval.input_hash) {
          return { decision: await refuseIn(trx, row, principal, refused('stale') as Decision & { ok: false }) };
        }
        const taken = await trx
          .updateTable('toolgate_approvals')
          .set({ decision: 'approved', approver: principal, decided_at: clock.now(), consumed: 1 })
          .where('call_id', '=', id)
          .where('decision', 'is', null)
          .executeTakeFirst();
        if (Number(taken.numUpdatedRows) === 0) return { decision: await refuseIn(trx, row, principal, notAwaiting(row.status)) };
        const started = await keeper.moveIn(trx, row, { type: 'execute' }, principal);
        if (started === undefined) throw new Error('the approved call could not be started'); // rolls the approval back
        return { decision: { ok: true }, started };
      }),
    );
    if (outcome.started !== undefined) {
      guard(id);
      pipeline.run(outcome.started as never, { actor: principal });
    }
    return outcome.decision;
  }

  async function deny(id: string, { principal, reason }: { readonly principal: string; readonly reason?: string }): Promise<Decision> {
    const found = await forDecision(id, principal);
    if ('ok' in found) return found;
    if (!(await mayDecide(principal, found.info))) {
      await audit(id, principal, 'forbidden', `"${principal}" may not deny this call`);
      return refused('forbidden');
    }
    return keeper.exclusive(id, () =>
      ledger.transaction(async (trx) => {
        const row = await keeper.lock(trx, id);
        if (row === undefined) return refused('not_found');
        if (row.status !== 'awaiting_approval') return refuseIn(trx, row, principal, notAwaiting(row.status));
        const approval = await trx.selectFrom('toolgate_approvals').selectAll().where('call_id', '=', id).executeTakeFirst();
        if (approval !== undefined && approval.decision === null && clock.now() >= approval.expires_at) {
          await keeper.refuse(trx, row, principal, 'expired', 'the denial came after the approval had expired');
          await expire(trx, row, principal);
          return refused('expired');
        }
        await trx
          .updateTable('toolgate_approvals')
          .set({ decision: 'denied', approver: principal, decided_at: clock.now() })
          .where('call_id', '=', id)
          .where('decision', 'is', null)
          .execute();
        const next = await keeper.moveIn(trx, row, { type: 'cancel', reason: { code: 'approval_denied', message: textOf(reason, 'a person denied this call') } }, principal);
        return next === undefined ? refused('not_awaiting') : ({ ok: true } as const);
      }),
    );
  }

  async function cancel(id: string, { principal, reason }: { readonly principal: string; readonly reason?: string }): Promise<Decision> {
    const message = textOf(reason, 'the user cancelled this call');
    const draft = keeper.drafts.get(id);
    if (draft !== undefined) {
      if (!(await mayView(principal, draft.session, draft.owner))) return refused('not_found');
      const next = await keeper.move(id, { type: 'cancel', reason: { code: 'user_cancelled', message } }, { actor: principal });
      if (next !== undefined) return { ok: true };
    }
    const claim = keeper.claims.get(id);
    if (claim !== undefined && pipeline.running(id) && (await mayView(principal, claim.session, claim.owner))) {
      // Stop the tool here first, before reading the call: its result is dropped, and a transaction
      // it holds is rolled back (on SQLite, that transaction holds the only connection).
      await pipeline.stop(id, new DOMException(message, 'AbortError'));
    }
    const found = await forDecision(id, principal);
    if ('ok' in found) return found;
    return keeper.exclusive(id, () =>
      ledger.transaction(async (trx) => {
        const row = await keeper.lock(trx, id);
        if (row === undefined) return refused('not_found');
        if (isTerminal(row.status)) return refuseIn(trx, row, principal, refused('settled') as Decision & { ok: false });
        if (row.status === 'awaiting_approval') {
          await trx.updateTable('toolgate_approvals').set({ decision: 'cancelled', approver: principal, decided_at: clock.now() }).where('call_id', '=', id).where('decision', 'is', null).execute();
        }
        const next = await keeper.moveIn(trx, row, { type: 'cancel', reason: { code: 'user_cancelled', message } }, principal);
        if (next === undefined) return refuseIn(trx, row, principal, refused('settled') as Decision & { ok: false });
        return { ok: true } as const;
      }),
    ).then((decision) => {
      if (decision.ok) keeper.release(id);
      return decision;
    });
  }

  async function snapshot(session: string, principal: string): Promise<{ seq: number; calls: ToolCallRecord[] }> {
    const owner = await sessionOwner(session);
    if (!(await mayView(principal, session, owner))) return { seq: await ledger.head(), calls: [] };
    return ledger.snapshot(session);
  }

  function moves(session: string, { principal, after }: { readonly principal: string; readonly after?: number }) {
    let stop: (() => void) | undefined = undefined;
    const feed = pushFeed<LedgerMove>(() => {
      stop?.();
      closing.delete(feed);
    });
    closing.add(feed);
    let owner: string | undefined;
    // Checked on every event: a feed opened before the session's first call shows nothing its
    // principal may not see once an owner exists.
    const visible = async () => {
      owner ??= await sessionOwner(session);
      return mayView(principal, session, owner);
    };
    // Items arrive from two places: the ledger (catching up) and the tail (live); `cursor` keeps
    // each event once and in order.
    let cursor = -1;
    const queued: LedgerMove[] = [];
    let live = false;
    let delivering = Promise.resolve();
    const deliver = (items: readonly LedgerMove[]) => {
      delivering = delivering.then(async () => {
        for (const item of items) {
          if (feed.closed() || item.event.seq <= cursor) continue;
          cursor = item.event.seq;
          if (await visible()) feed.push(item);
        }
      }).catch((error: unknown) => feed.fail(error));
    };
    const tailing = tail.subscribe((items) => {
      const mine = items.filter((item) => item.event.session === session);
      if (live) deliver(mine);
      else queued.push(...mine);
    });
    stop = tailing.stop;
    void (async () => {
      try {
        // Catch up only once the tail has a starting point, so that the two meet without a gap. A
        // live-only feed starts at the ledger's head as it is now: the tail, already running, may not
        // have delivered everything up to it yet, and that is not "from now on".
        const from = await tailing.from;
        cursor = after ?? Math.max(from, await ledger.head());
        if (after !== undefined) {
          for (;;) {
            const page = await ledger.movesAfter(cursor, { session, limit: 500 });
            deliver(page);
            await delivering;
            if (page.length < 500 || feed.closed()) break;
          }
        }
        live = true;
        deliver(queued.splice(0));
      } catch (error) {
        feed.fail(error);
      }
    })();
    return feed;
  }

  const closing = new Set<{ return: () => unknown }>();

  function events(session: string, options: { readonly principal: string; readonly after?: number }): AsyncIterableIterator<LedgerEvent> {
    const source = moves(session, options);
    const iterator: AsyncIterableIterator<LedgerEvent> = {
      next: async () => {
        const result = await source.next();
        return result.done === true ? { value: undefined, done: true } : { value: result.value.event, done: false };
      },
      return: async () => {
        await source.return();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  async function recover(): Promise<Recovery> {
    const now = clock.now();
    const rerun: string[] = [];
    const interrupted: string[] = [];
    const expired: string[] = [];
    const stale = await ledger.read((db) =>
      db.selectFrom('toolgate_calls').selectAll().where('status', 'in', ['pending', 'validated', 'executing']).where('lease_expires_at', '<', now).execute(),
    );
    for (const found of stale) {
      // A gate closed meanwhile takes nothing over: it would run a tool after close() returned.
      if (closed) break;
      if (keeper.claims.has(found.id) || keeper.drafts.has(found.id)) continue;
      const tool = entry(found.tool, found.id)?.tool;
      const again = tool !== undefined && found.status === 'executing' && (tool.idempotent === true || tool.transactional === true);
      const result = await keeper.exclusive(found.id, () =>
        ledger.transaction(async (trx) => {
          const row = await keeper.lock(trx, found.id);
          // Someone else recovered it, or its process came back and renewed its lease.
          if (row === undefined || row.version !== found.version || (row.lease_expires_at ?? 0) >= clock.now()) return undefined;
          if (again) {
            const fence = row.fence + 1;
            await trx
              .updateTable('toolgate_calls')
              .set({ lease_owner: instance, lease_expires_at: clock.now() + leaseMs, fence, version: row.version + 1 })
              .where('id', '=', row.id)
              .where('version', '=', row.version)
              .execute();
            await keeper.refuse(trx, row, RECOVERY.actor, 'recovered', `the process running this call stopped; running it again with the same idempotency key (${tool?.transactional === true ? 'transactional' : 'idempotent'} tool)`);
            return { kind: 'rerun' as const, fence, key: row.idempotency_key, record: readRecord(row.record) };
          }
          const next = await keeper.moveIn(
            trx,
            row,
            row.status === 'executing'
              ? { type: 'fail', reason: { code: 'interrupted', message: 'the server stopped while the tool ran; it may or may not have taken effect' } }
              : ({ type: 'fail', reason: { code: 'interrupted', message: 'the server stopped before this call ran; nothing was run' } } as never),
            RECOVERY.actor,
            { unfenced: true },
          );
          return next === undefined ? undefined : { kind: 'interrupted' as const };
        }),
      );
      if (result?.kind === 'rerun') {
        keeper.claimed(found.id, { fence: result.fence, idempotencyKey: result.key, session: found.session, owner: found.owner });
        guard(found.id);
        pipeline.run(result.record as never, RECOVERY);
        rerun.push(found.id);
      } else if (result?.kind === 'interrupted') interrupted.push(found.id);
    }
    const waiting = await ledger.read((db) => db.selectFrom('toolgate_approvals').select('call_id').where('decision', 'is', null).where('expires_at', '<=', now).execute());
    for (const { call_id: id } of waiting) {
      if (closed) break;
      const next = await keeper.exclusive(id, () =>
        ledger.transaction(async (trx) => {
          const row = await keeper.lock(trx, id);
          return row?.status === 'awaiting_approval' ? expire(trx, row, TIMEKEEPER.actor) : undefined;
        }),
      );
      if (next !== undefined) expired.push(id);
    }
    return { rerun, interrupted, expired };
  }

  let sweeping: unknown;
  let closed = false;
  const sweep = () => {
    sweeping = clock.setTimeout(() => {
      if (closed) return;
      recover().then(sweep, (error: unknown) => {
        onError(error);
        sweep();
      });
    }, leaseMs);
  };
  if (options.recover !== false) {
    void recover().then(undefined, onError);
    sweep();
  }

  return {
    propose,
    run: async (input, proposeOptions) => {
      const call = await propose(input, proposeOptions);
      if (isTerminal(call.status)) return call as SettledCall;
      return (await settled(call.id)) ?? (call as SettledCall);
    },
    settled,
    get,
    approve,
    deny,
    cancel,
    calls: async (session, principal) => (await snapshot(session, principal)).calls,
    snapshot,
    canSee: async (session, principal) => mayView(principal, session, await sessionOwner(session)),
    events,
    moves,
    async toolResult(id, format, scope) {
      const call = await get(id, scope === undefined ? undefined : { principal: scopedPrincipal('serverGate.toolResult', scope) as string });
      if (call === undefined) throw new Error(`serverGate.toolResult: no call with id "${id}" is in the ledger.`);
      if (!isTerminal(call.status)) throw new Error(`serverGate.toolResult: call "${id}" is ${call.status}; answer it once it has settled (await serverGate.settled(id)).`);
      return toolResult(call as SettledCall, format);
    },
    turn,
    recover,
    get tools() {
      return tools;
    },
    limits,
    check: () => registry.check(),
    replaceTools(next) {
      if (!Array.isArray(next as unknown)) throw new TypeError('serverGate.replaceTools: pass the tools as an array of defineTool objects.');
      registry = createToolRegistry(next, compileJson, 'serverGate.replaceTools');
      tools = [...next];
    },
    verify: () => ledger.verify(),
    async close() {
      closed = true;
      if (sweeping !== undefined) clock.clearTimeout(sweeping);
      unfollow();
      tail.close();
      keeper.close();
      for (const feed of [...closing]) await feed.return();
    },
  };
}

function positive(name: string, value: number): number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
    throw new TypeError(`createServerGate: \`${name}\` must be a positive number of milliseconds (got ${String(value)}).`);
  }
  return value;
}

function checkProposeOptions(options: ServerProposeOptions | undefined): ServerProposeOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('serverGate.propose: pass { session, principal }: the conversation and the authenticated user the model acts for.');
  }
  if (typeof options.session !== 'string' || options.session === '') throw new TypeError('serverGate.propose: `session` must be a non-empty string (the conversation id).');
  if (typeof options.principal !== 'string' || options.principal === '') {
    throw new TypeError('serverGate.propose: `principal` must be a non-empty string (the authenticated user the model acts for).');
  }
  return options;
}

/** What a proposal said, for telling the same proposal again from another one with the same id. */
function hashProposal(reading: Reading, limits: Limits): string {
  let said: string;
  if (!reading.ok) said = `unreadable:${reading.reason.code}:${reading.name ?? ''}`;
  else {
    const args = reading.proposal.arguments;
    if (typeof args === 'string') said = args.length > limits.maxArgumentChars ? `too_large:${args.length}:${args.slice(0, 1024)}` : args;
    else if (args === undefined) said = '';
    else {
      const copied = copyValue(args, limits);
      said = copied.kind === 'ok' ? canonicalJson(copied.value) : `unreadable:${copied.kind}`;
    }
    said = `${reading.proposal.name}\u0000${said}`;
  }
  return createHash('sha256').update(said).digest('hex');
}

function conflictRecord(original: ToolCallRecord, message: string, at: number): ToolCallRecord {
  const reason = { code: 'id_conflict', message } as const;
  const pending = createPending({ id: original.id, name: original.name, source: original.source, generatedId: false, turn: original.turn, at });
  return { ...pending, status: 'rejected', reason, history: [...pending.history, { status: 'rejected', at, reason }] } as unknown as ToolCallRecord;
}

function textOf(reason: unknown, fallback: string): string {
  if (typeof reason === 'string' && reason.trim() !== '') return reason.slice(0, 2000);
  return fallback;
}
