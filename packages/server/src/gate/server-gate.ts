import type {
  JsonSchemaCompiler,
  Clock,
  Limits,
  LimitsOption,
  SettledCall,
  StreamGate,
  ToolCallRecord,
  ToolDefinition,
  ToolResultFormat,
  ToolResultFormats,
} from '@toolgate/core';
import type { ToolProblem } from '@toolgate/core/kit';
import type { ApprovalLinks } from '../links/approval-links.ts';
import type { VoteRefusal, VoteVia } from '../decision/channel-reason.ts';
import type { Channel } from '../notices/notice.ts';
import type { Budget } from '../policy/budget.ts';
import type { Decision } from '../decision/decision.ts';
import type { ReadScope } from './read-scope.ts';
import type { Ledger, LedgerEvent, LedgerMove } from '../ledger/ledger.ts';
import type { TurnSettledHandler } from '../turns/ended-turn.ts';

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
 * What `createServerGate` takes.
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
  /**
   * Separation of duties on a tool with `approvers`: `'forbid'` (default) refuses the call's
   * principal and its `onBehalfOf` when they approve it (`forbidden`, audited) and does not ask
   * them; `'allow'` lets them approve when the tool's `approvers` names them. A tool without
   * `approvers` is decided by `canApprove` alone.
   */
  readonly selfApproval?: 'forbid' | 'allow';
  /** How long a claim on a running call lasts without renewal (default 30 s); renewed every third of it. */
  readonly leaseMs?: number;
  /**
   * How long the end of a run (its result, or why it failed) is tried again while the ledger
   * cannot take it, in milliseconds (default `leaseMs`). Past it the process gives the call up:
   * its lease runs out and recovery settles it as its tool's kind says (re-run if idempotent or
   * transactional, else `failed` / `interrupted`).
   */
  readonly endingRetryMs?: number;
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
  /**
   * Limits on what calls may take in a rolling window (money, emails, calls), decided in the
   * ledger transaction that starts a call or sends it to a person; see {@link Budget}. Checked at
   * start: a mistake throws.
   */
  readonly budgets?: readonly Budget[];
  /**
   * The model's next step, run once a turn's last call has ended, wherever it ended: in this
   * request or another, on this app server or another, before or after a restart. A turn is the
   * calls one stream reader read over `serverGate.turn(...)`, recorded in the ledger when its
   * stream is over. One process at a time claims it (a lease renewed every third of `leaseMs`
   * while the handler runs); when the handler throws (the error goes to `onError`) or its process
   * dies, it runs again with the same turn id. A handler that never resolves keeps its claim for as
   * long as its process lives. A turn whose principal may not see its session is not recorded.
   *
   * @example
   * onTurnSettled: async (turn) => {
   *   // Each call as the turn's reader was answered (toolResult from @toolgate/core).
   *   const replies = turn.calls.map((call) => toolResult(call, 'openai-chat'));
   *   await nextModelStep(turn.session, replies, { signal: turn.signal });
   * }
   */
  readonly onTurnSettled?: TurnSettledHandler;
  /**
   * Signed approval links (see `approvalLinks`): with them, `serverGate.linkFor(call, principal)`
   * makes the confirm page's link for a principal, and a notice to a principal carries one. Give
   * the handler the same object: `toolgateHandler(gate, { authenticate, links })`.
   */
  readonly links?: ApprovalLinks;
  /**
   * Where the people a call asks hear of it: each channel is given a notice when they are asked,
   * reminded or added by an escalation, and when the call is decided or expires (see `Channel`).
   * A notice is written in the ledger with the move (or timer) that causes it and delivered by
   * whichever process claims it, tried again with backoff until the channel takes it; a channel
   * that fails never decides a call.
   */
  readonly channels?: readonly Channel[];
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
  /**
   * The person an agent acts for, when the principal is the agent's own (the requester): stored on
   * the record as `onBehalfOf`, given to the tool's `approvers`, and, with `selfApproval: 'forbid'`,
   * kept from approving the call.
   */
  readonly onBehalfOf?: string;
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
  /** Calls whose tool's `reconcile` is being asked what became of them, under this gate's claim. */
  readonly reconciling: readonly string[];
  /** Calls held in doubt for a person (`onUnknown: 'hold'`, no `reconcile` to ask). */
  readonly held: readonly string[];
  /** Calls ended `failed` / `interrupted`: their tool may or may not have taken effect. */
  readonly interrupted: readonly string[];
  /** Approvals that ran out, cancelled with `approval_expired`. */
  readonly expired: readonly string[];
  /** Calls whose tool's `remindAfterMs` came: those still asked were reminded. */
  readonly reminded: readonly string[];
  /** Calls whose tool's `escalate` step came: more principals asked (or the failure audited). */
  readonly escalated: readonly string[];
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
export interface ServerGate<
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  Tools extends readonly ToolDefinition<any, any, any>[] = readonly ToolDefinition<any, any, any>[],
> {
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
   * Resolves once the call has ended or is held in doubt for a person (`executing` with `doubt`:
   * its outcome is unknown until someone settles it with `resolve`), so that whoever answers the
   * model is not kept waiting for that person. Scoped as `settled` is.
   *
   * @example
   * const call = await serverGate.stopped(id, { principal });
   * if (call?.status === 'executing' && call.doubt) reply(heldText(call));
   */
  readonly stopped: (id: string, scope?: ReadScope) => Promise<ToolCallRecord | undefined>;
  /**
   * The call as the ledger holds it now; `undefined` for an unknown id. With `{ principal }`, also
   * `undefined` for a call that principal may not see (as `calls()` decides). Without it, it answers
   * any call to anyone: for trusted server code only, never with an id a client sent.
   */
  readonly get: (id: string, scope?: ReadScope) => Promise<ToolCallRecord | undefined>;
  /**
   * Approves a call that awaits approval, if `inputHash` is the hash of the input it holds (what the
   * person was shown); it runs once the last approver its tool needs (`approvals`) has approved.
   * With `input`, the person approves an edited input: it is checked as a proposal would be
   * (schema, `authorize`, budgets; a field the model did not propose is refused) and a bad edit is
   * refused `invalid_edit` while the call keeps waiting. The record keeps what the model proposed
   * (`edit.proposed`) beside what runs, and the tool result tells the model what the person changed.
   * A channel passes `via` (its name, and its own id of the person): a vote refused here is then
   * audited once, naming the channel, the outside user and the principal.
   */
  readonly approve: (
    id: string,
    options: {
      readonly principal: string;
      readonly inputHash: string;
      readonly input?: unknown;
      readonly name?: unknown;
      readonly via?: VoteVia;
    },
  ) => Promise<Decision>;
  readonly deny: (
    id: string,
    options: { readonly principal: string; readonly reason?: string; readonly via?: VoteVia },
  ) => Promise<Decision>;
  readonly cancel: (
    id: string,
    options: { readonly principal: string; readonly reason?: string },
  ) => Promise<Decision>;
  /**
   * Settles a call held in doubt (`executing` with `doubt`: its run was cut off and nobody could
   * tell whether its effect happened) on the word of a person who checked: `committed` with the
   * output they give (checked against the tool's `outputSchema`; a bad one is refused
   * `invalid_output` and the call stays held), or `not_executed`: it runs again once, with the same
   * idempotency key. `canApprove` decides who may. Audited with who and their `note`; the committed
   * record carries them as its `evidence`. Refused `not_in_doubt` for a call that is not held (of
   * two at once, one wins).
   *
   * @example
   * await serverGate.resolve(id, { principal: ops.id, outcome: 'committed', output: { charge: 'ch_42', amount_cents: 1250 }, note: 'ch_42 is in the Stripe dashboard' });
   */
  readonly resolve: (
    id: string,
    request: {
      readonly principal: string;
      readonly outcome: 'committed' | 'not_executed';
      readonly output?: unknown;
      readonly note?: string;
    },
  ) => Promise<Decision>;
  /**
   * Undoes a committed call through its tool's `compensate`, run as a call of its own,
   * `${id}:compensate`, in the same session: approved first if the tool needs approval, leased and
   * recovered like any call of the tool's kind, audited. The original record's `compensation`
   * links to it and says how it ended and what it returned. `canApprove` decides who may. Refused
   * `not_committed`, `no_compensate` or `already_compensated` (a call is compensated once; of two
   * requests at once, one makes it).
   *
   * @example
   * await serverGate.compensate(purchase.id, { principal: ops.id, reason: 'the customer returned it' });
   */
  readonly compensate: (
    id: string,
    request: { readonly principal: string; readonly reason?: string },
  ) => Promise<Decision>;
  /** The session's calls, oldest first, if the principal may see the session; otherwise none. */
  readonly calls: (session: string, principal: string) => Promise<ToolCallRecord[]>;
  /** The session's calls as of ledger event `seq`, for a feed that then follows from `seq`. */
  readonly snapshot: (
    session: string,
    principal: string,
  ) => Promise<{ readonly seq: number; readonly calls: ToolCallRecord[] }>;
  /** Whether the principal may see the session (a session nobody has proposed into yet: yes). */
  readonly canSee: (session: string, principal: string) => Promise<boolean>;
  /**
   * The session's events the principal may see: every one after `after` (`0`: from the start),
   * then live ones; without `after`, live ones only. Ends when the consumer stops or the gate closes.
   */
  readonly events: (
    session: string,
    options: { readonly principal: string; readonly after?: number },
  ) => AsyncIterableIterator<LedgerEvent>;
  /** `events`, each with the record as it was right after the move. */
  readonly moves: (
    session: string,
    options: { readonly principal: string; readonly after?: number },
  ) => AsyncIterableIterator<LedgerMove>;
  /**
   * The calls waiting for this principal's decision, across sessions, oldest first: the
   * approver's inbox. A call is in it while it waits and its tool's `approvers` asked this
   * principal, who has not approved it yet (an approver of a quorum who approved is no longer
   * asked; one whose approval an edit undid is asked again). Being asked lets a principal see that
   * call (`get`, `settled`, a vote), not the rest of its session. A tool without `approvers` asks
   * nobody by name: its calls are decided by `canApprove` and are in no inbox.
   *
   * @example
   * for (const call of await serverGate.awaiting(user.id)) console.log(call.name, call.input);
   */
  readonly awaiting: (principal: string) => Promise<ToolCallRecord[]>;
  /** `awaiting` as of ledger event `seq`, for a feed that then follows from `seq` (what `GET {base}/approvals` answers). */
  readonly awaitingSnapshot: (
    principal: string,
  ) => Promise<{ readonly seq: number; readonly calls: ToolCallRecord[] }>;
  /**
   * The moves of every call that asks this principal, across sessions: those that bring a call
   * into their inbox, change it there, or take it out. Each after `after` (`0`: from the start),
   * then live ones; without `after`, live ones only. Ends when the consumer stops or the gate closes.
   */
  readonly awaitingMoves: (
    principal: string,
    options?: { readonly after?: number },
  ) => AsyncIterableIterator<LedgerMove>;
  /**
   * What to send back to the model for one settled call, in a provider's format. With
   * `{ principal }`, a call that principal may not see is refused exactly as an unknown id is.
   */
  readonly toolResult: <F extends ToolResultFormat>(
    id: string,
    format: F,
    scope?: ReadScope,
  ) => Promise<ToolResultFormats[F]>;
  /**
   * The gate a provider's stream reader takes, for one assistant turn: calls open as the model names
   * them and go to the ledger as their arguments complete, exactly as `propose` would send them.
   * Each call is tagged with `turn` when given, else with the reader's turn id (the provider's
   * response id). With `onTurnSettled`, the reader's end records the turn under that id, and the
   * reader's `stopped()` and `settled()` resolve only once it is recorded: a request may end then,
   * and the turn goes on without it (they reject when it could not be recorded, saying why).
   */
  readonly turn: (options: TurnOptions) => TurnGate;
  /** The `seq` of the last event the ledger holds (0 when none): where a feed resumed with `Last-Event-ID` may start at most. */
  readonly head: () => Promise<number>;
  /** Settles calls a process that died left open, and approvals that ran out. */
  readonly recover: () => Promise<Recovery>;
  /** Walks the audit chain and names the first event changed, removed or inserted (from a checkpoint, with progress: see `Ledger.verify`). */
  readonly verify: Ledger['verify'];
  /** Stops this gate's timers and feeds (the ledger stays open: close it with `ledger.close()`). */
  readonly close: () => Promise<void>;
  /**
   * Compiles every tool's schemas (each is otherwise compiled on its tool's first call) and lists
   * the tools whose schemas do not compile; a call of such a tool is rejected with `tool_unavailable`.
   */
  readonly check: () => readonly ToolProblem[];
  /**
   * The registered tools, in the order given (for a provider's tool definitions), typed as the
   * gate was created with them: each tool keeps its name, input and output types. After
   * `replaceTools` it lists the new set; its static type stays that of the first.
   */
  readonly tools: Tools;
  /**
   * Replaces the tools: later proposals (turn views made before included) see the new set, and
   * `tools` lists it. A call proposed before keeps the definition it was proposed with in this
   * process, for its approval, its run and its result; another process runs a call with its own
   * tool of that name. Throws, and changes nothing, when two tools share a name.
   */
  /**
   * The confirm page's link for `principal` to decide `call` (`${baseUrl}/links/<token>`), bound
   * to the hash of the input the record holds: after an edit, an older link is refused as stale.
   * `undefined` when the gate has no `links`, or the record has no validated input. Whether the
   * principal may decide is checked when they vote, not here.
   *
   * @example
   * const call = await serverGate.propose(toolCall, { session, principal: user.id });
   * for (const approver of call.approval?.asked ?? []) await mail(approver, serverGate.linkFor(call, approver));
   */
  readonly linkFor: (call: ToolCallRecord, principal: string) => string | undefined;
  /**
   * Writes a vote a channel refused before it reached `approve` or `deny` (a link past its expiry,
   * a signature that does not hold, a user the channel cannot map) into the audit trail: an event
   * of the call when `callId` names one the ledger holds, else an event of the channel (`callId`
   * and `session` empty). For channels: `approve` and `deny` audit their own refusals (pass them `via`).
   *
   * @example
   * await serverGate.refuseVote({ channel: 'slack', code: 'forbidden', message: 'Slack user U024BE7LH maps to no principal', user: 'U024BE7LH' });
   */
  readonly refuseVote: (refusal: VoteRefusal) => Promise<void>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly replaceTools: (tools: readonly ToolDefinition<any, any, any>[]) => void;
  readonly limits: Limits;
}
