import { ajvJsonSchema, createPipeline, idempotencyKeyOf, type Pipeline } from '@toolgate/core/kit';
import {
  isTerminal,
  toolResult,
  type SettledCall,
  type ToolCallRecord,
  type ToolDefinition,
} from '@toolgate/core';
import { createTail, type Tail } from '../feed/feed.ts';
import { eventsOf, openSessionFeed } from '../feed/session-feed.ts';
import { wasAsked } from '../inbox/asks.ts';
import { awaitingCalls, inboxPrincipal, inboxSnapshot, openInboxFeed } from '../inbox/inbox.ts';
import { createLedgerKeeper } from '../keeper/ledger-keeper.ts';
import { createAdmission, release } from '../policy/admission.ts';
import { createAsking } from '../policy/approvers.ts';
import { checkBudgets } from '../policy/budget.ts';
import { approve, cancel, deny } from './decisions.ts';
import { createFollower } from './follower.ts';
import type { GateParts } from './parts.ts';
import { proposeReading, readInput } from './proposals.ts';
import { scopedPrincipal, type ReadScope } from './read-scope.ts';
import { recover, sweep } from './recovery.ts';
import type { ServerGate, ServerGateOptions } from './server-gate.ts';
import { createSessions } from './sessions.ts';
import { checkProposeOptions, gateSettings } from './settings.ts';
import { createToolSet, type ToolSet } from './tool-set.ts';
import { openTurn } from './turn.ts';
import { keepTurns } from '../turns/turn-keeping.ts';
import { createWaiters } from './waiters.ts';
import { refuseVote } from '../links/vote-refusal.ts';
import { compensate } from '../outcomes/compensation.ts';
import { resolve } from '../outcomes/resolve.ts';
import { withTimes } from '../timers/plan.ts';
import { keepTimers } from '../timers/timer-keeping.ts';
import { watchWaits } from '../timers/watch.ts';
import { linkOf } from '../notices/deliver.ts';
import { gateNotices } from '../notices/gate-notices.ts';
import { checkChannels } from '../notices/notice.ts';
import { noticesOfMoves } from '../notices/notice-watch.ts';
import { freshNotices, noticeSettling } from '../notices/settling.ts';

/**
 * Creates the server gate over a ledger.
 *
 * @example
 * const ledger = await sqliteLedger({ path: './toolgate.db' });
 * const gate = createServerGate({ tools: [charge, transfer], ledger });
 * const call = await gate.run(toolCall, { session: chat.id, principal: user.id });
 * messages.push(await gate.toolResult(call.id, 'openai-chat'));
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
export function createServerGate<const Tools extends readonly ToolDefinition<any, any, any>[]>(
  options: ServerGateOptions & { readonly tools: Tools },
): ServerGate<Tools> {
  const parts = assemble(options);
  const { ledger, settings, keeper, follower, sessions, life, tail } = parts;
  const feeds = new Set<{ return: () => unknown }>();

  const snapshot = async (session: string, principal: string) => {
    const owner = await sessions.owner(session);
    if (!(await sessions.mayView(principal, session, owner))) return { seq: await ledger.head(), calls: [] };
    return ledger.snapshot(session);
  };
  const moves: ServerGate['moves'] = (session, { principal, after }) => {
    let owner: string | undefined;
    // Checked on every event: a feed opened before the session's first call shows nothing its
    // principal may not see once an owner exists.
    const visible = async () => {
      owner ??= await sessions.owner(session);
      return sessions.mayView(principal, session, owner);
    };
    const feed = openSessionFeed({ ledger, tail, visible }, session, after, () => feeds.delete(feed));
    feeds.add(feed);
    return feed;
  };
  const propose: ServerGate['propose'] = (input, proposeOptions) =>
    proposeReading(parts, readInput(input, settings.limits), checkProposeOptions(proposeOptions));
  const get = async (id: string, scope?: ReadScope) => {
    const principal = scopedPrincipal('serverGate.get', scope);
    const found = await keeper.read(id);
    if (found === undefined || principal === undefined) return found?.record;
    if (await sessions.mayView(principal, found.session, found.owner)) return found.record;
    // Being asked about a call lets a principal see it, not the rest of its session.
    return (await wasAsked(ledger, found.record, principal)) ? found.record : undefined;
  };
  const awaitingMoves: ServerGate['awaitingMoves'] = (principal, { after } = {}) => {
    const who = inboxPrincipal('serverGate.awaitingMoves', principal);
    const feed = openInboxFeed({ ledger, tail }, who, after, () => feeds.delete(feed));
    feeds.add(feed);
    return feed;
  };
  const settled: ServerGate['settled'] = async (id, scope) => {
    const principal = scopedPrincipal('serverGate.settled', scope);
    if (principal !== undefined && (await get(id, { principal })) === undefined) return undefined;
    return follower.settled(id);
  };
  const stopped: ServerGate['stopped'] = async (id, scope) => {
    const principal = scopedPrincipal('serverGate.stopped', scope);
    if (principal !== undefined && (await get(id, { principal })) === undefined) return undefined;
    return follower.stopped(id);
  };

  const turns =
    options.onTurnSettled === undefined ? undefined : keepTurns(parts, tail, options.onTurnSettled);
  const notices = gateNotices(parts);
  const timers = keepTimers(parts, { running: options.recover !== false, onFired: notices?.onFired });
  keeper.onMoved((call) => {
    if (call.status === 'awaiting_approval') timers.poke();
  });
  let stopSweeping: (() => void) | undefined;
  if (options.recover !== false) {
    void recover(parts).then(undefined, settings.onError);
    stopSweeping = sweep(parts, () => recover(parts));
  }

  return {
    propose,
    run: async (input, proposeOptions) => {
      const call = await propose(input, proposeOptions);
      if (isTerminal(call.status)) return call as SettledCall;
      return (await follower.settled(call.id)) ?? (call as SettledCall);
    },
    settled,
    stopped,
    get,
    approve: (id, decision) => approve(parts, id, decision),
    deny: (id, decision) => deny(parts, id, decision),
    cancel: (id, decision) => cancel(parts, id, decision),
    resolve: (id, request) => resolve(parts, id, request),
    compensate: (id, request) => compensate(parts, id, request),
    calls: async (session, principal) => (await snapshot(session, principal)).calls,
    snapshot,
    canSee: async (session, principal) => sessions.mayView(principal, session, await sessions.owner(session)),
    events: (session, feedOptions) => eventsOf(moves(session, feedOptions)),
    moves,
    awaiting: async (principal) => awaitingCalls(ledger, inboxPrincipal('serverGate.awaiting', principal)),
    awaitingSnapshot: async (principal) =>
      inboxSnapshot(ledger, inboxPrincipal('serverGate.awaitingSnapshot', principal)),
    awaitingMoves,
    async toolResult(id, format, scope) {
      const call = await get(
        id,
        scope === undefined
          ? undefined
          : { principal: scopedPrincipal('serverGate.toolResult', scope) as string },
      );
      if (call === undefined)
        throw new Error(`serverGate.toolResult: no call with id "${id}" is in the ledger.`);
      if (!isTerminal(call.status))
        throw new Error(
          `serverGate.toolResult: call "${id}" is ${call.status}; answer it once it has settled (await serverGate.settled(id)).`,
        );
      return toolResult(call as SettledCall, format);
    },
    turn: (turnOptions) =>
      openTurn(parts, turnOptions, {
        settled: follower.settled,
        stopped: follower.stopped,
        cancel: (id, decision) => cancel(parts, id, decision),
        closed: turns?.closed,
      }),
    async recover() {
      const recovered = await recover(parts);
      const fired = await timers.sweep();
      await notices?.sweep();
      await turns?.sweep();
      return { ...recovered, ...fired, expired: [...recovered.expired, ...fired.expired] };
    },
    head: () => ledger.head(),
    get tools() {
      // The static type stays the one the gate was made with (see `ServerGate.tools`).
      return parts.tools.list() as unknown as Tools;
    },
    limits: settings.limits,
    check: () => parts.tools.check(),
    replaceTools: (next) => parts.tools.replace(next),
    linkFor: (call, principal) => linkOf(options.links, call, principal),
    refuseVote: (refusal) => refuseVote(parts, refusal),
    verify: (verifyOptions) => ledger.verify(verifyOptions),
    async close() {
      life.closed = true;
      stopSweeping?.();
      await timers.stop();
      await notices?.stop();
      await turns?.stop();
      follower.close();
      tail.close();
      keeper.close();
      for (const feed of [...feeds]) await feed.return();
    },
  };
}

/**
 * The key a call's effect goes by downstream: its tool's `idempotencyKey` of the validated input,
 * else the call id (a call refused before its input was valid has no effect to name).
 */
function keyOf(tools: ToolSet, record: ToolCallRecord): string {
  const tool = tools.entry(record.name, record.id)?.tool;
  if (tool?.idempotencyKey === undefined || !HAS_INPUT.has(record.status)) return record.id;
  return idempotencyKeyOf(tool, record.input, record);
}

const HAS_INPUT: ReadonlySet<string> = new Set(['awaiting_approval', 'executing', 'committed', 'failed']);

/** Builds the gate's parts, each given what it works with. */
function assemble(options: ServerGateOptions): GateParts & { readonly tail: Tail } {
  const { ledger } = options;
  const settings = gateSettings(options);
  const channels = checkChannels(options.channels);
  const tools = createToolSet(options.tools, options.jsonSchema ?? ajvJsonSchema);
  const budgets = checkBudgets(options.budgets);
  const approvalsOf = (name: string, id: string) => tools.entry(name, id)?.tool.approvals ?? 1;
  const toolOf = (name: string, id: string) => tools.entry(name, id)?.tool;
  const asking = createAsking({
    toolOf,
    approvalsOf,
    selfApproval: settings.selfApproval,
    clock: settings.clock,
    inApp: ledger.inApp,
  });
  const admit = createAdmission({ ledger, clock: settings.clock, budgets, approvalsOf });
  // Hears each move (a quorum's vote that keeps a call waiting is one: an edit asks again).
  const settling = noticeSettling({ ledger, leaseMs: settings.leaseMs, onError: settings.onError });
  const fresh = freshNotices();
  const watch = watchWaits(
    { toolOf, approvalTtlMs: settings.approvalTtlMs, clock: settings.clock },
    channels.length === 0 ? undefined : noticesOfMoves(channels, settings, settling, fresh),
  );
  const waiters = createWaiters();
  const keeper = createLedgerKeeper({
    ledger,
    clock: settings.clock,
    leaseMs: settings.leaseMs,
    approvalTtlMs: settings.approvalTtlMs,
    instance: settings.instance,
    onError: settings.onError,
    keyOf: (record) => keyOf(tools, record),
    endingRetryMs: settings.endingRetryMs,
    // Without budgets nothing is counted, and nothing is given back.
    policy: {
      admit,
      release: budgets.length === 0 ? () => Promise.resolve() : (trx, id) => release(trx, id, ledger.dialect),
      // A call that waits shows when it escalates and expires, when its tool sets those times.
      ask: async (trx, call) => {
        const asked = await asking(trx, call);
        const { record } = asked;
        return {
          ...asked,
          record: withTimes(record, toolOf(record.name, record.id), settings.approvalTtlMs),
        };
      },
      watch,
    },
    transactional: (name, id) => tools.entry(name, id)?.tool.transactional === true,
    onMoveFailed: (id, error) => waiters.failed(id, error) || settings.onError(error),
    onTaken: (id) => waiters.taken(id),
    onLeaseLost: (id) =>
      void pipeline.stop(id, new DOMException('This process lost its claim on the call.', 'AbortError')),
  });
  keeper.onMoved((call) => {
    if (call.status === 'pending' || call.status === 'validated') return;
    // An ending this process wrote settles its waiters at once; the tail brings the others' endings.
    if (isTerminal(call.status)) {
      tools.unpin(call.id);
      waiters.settle(call as SettledCall);
    }
    if (call.doubt !== undefined) waiters.hold(call);
    waiters.rested(call);
  });
  const pipeline: Pipeline = createPipeline({
    limits: settings.limits,
    clock: settings.clock,
    onError: settings.onError,
    entry: tools.entry,
    toolNames: tools.names,
    keeper,
    state: () => undefined,
  });
  const tail = createTail(ledger, settings.onError);
  const follower = createFollower({
    ledger,
    tail,
    keeper,
    pipeline,
    waiters,
    ended: tools.unpin,
    onError: settings.onError,
  });
  const sessions = createSessions(ledger, settings);
  const policy = { ledger, keeper, clock: settings.clock, budgets, approvalsOf };
  return {
    options,
    settings,
    channels,
    settling,
    freshNotices: fresh,
    ledger,
    tools,
    keeper,
    pipeline,
    waiters,
    follower,
    sessions,
    policy,
    life: { closed: false },
    tail,
  };
}
