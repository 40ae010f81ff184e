import { createPending, refusal, truncatedReason } from '@toolgate/core/kit';
import { isTerminal, type ProposalSource, type SettledCall, type ToolCallRecord } from '@toolgate/core';
import type { Decision } from '../decision/decision.ts';
import type { GateParts } from './parts.ts';
import { proposalSignal } from './abort-signal.ts';
import { proposeReading, readInput, type Reading } from './proposals.ts';
import type { TurnGate, TurnOptions } from './server-gate.ts';
import { checkProposeOptions, textOf } from './settings.ts';
import type { TurnEnd } from '../turns/continuations.ts';

/**
 * What a turn asks of its gate once a call is proposed: its end, and a cancel.
 *
 * @example
 * const calls: TurnCalls = { settled: (id) => follower.settled(id), cancel: (id, options) => cancel(parts, id, options) };
 */
export interface TurnCalls {
  readonly settled: (id: string) => Promise<SettledCall | undefined>;
  /** Resolves once the call has ended or is held in doubt for a person. */
  readonly stopped: (id: string) => Promise<ToolCallRecord | undefined>;
  readonly cancel: (
    id: string,
    options: { readonly principal: string; readonly reason?: string },
  ) => Promise<Decision>;
  /** The turn's stream is over (with `onTurnSettled`: the turn is recorded); resolves with why it was not recorded, if it was not. */
  readonly closed?: ((turn: TurnEnd) => Promise<Error | undefined>) | undefined;
}

/**
 * One assistant turn's calls as a stream reader sees them: opened as the model names them,
 * previewed here, and proposed to the ledger as each one's arguments complete.
 *
 * @example
 * const reader = readOpenAIChatStream(openTurn(parts, { session, principal }, calls));
 */
export function openTurn(
  parts: Pick<
    GateParts,
    'settings' | 'ledger' | 'tools' | 'keeper' | 'pipeline' | 'waiters' | 'follower' | 'sessions'
  >,
  turnOptions: TurnOptions,
  gate: TurnCalls,
): TurnGate {
  const { keeper, settings } = parts;
  const { clock, limits, onError, generateId } = settings;
  const { settled, cancel } = gate;
  const { session, principal, onBehalfOf } = checkProposeOptions(turnOptions);
  const signal = proposalSignal('serverGate.turn', turnOptions.signal);
  const { records, watch, unwatchWhenDone } = watchedRecords(keeper);
  const answers = new Map<string, Promise<ToolCallRecord>>();
  const opened = new Map<string, OpenedCall>();
  let ended = false;
  let recorded: Promise<Error | undefined> | undefined;
  /** Answers once the turn, if its stream is over, is in the ledger: what a request waits for can then outlive its process. */
  const once = async <T>(answer: T): Promise<T> => {
    const refused = await recorded;
    if (refused !== undefined) throw refused;
    return answer;
  };
  const send = (id: string, reading: Reading, turnId: string | undefined): ToolCallRecord => {
    watch();
    const answer = proposeReading(parts, reading, {
      session,
      principal,
      ...(onBehalfOf === undefined ? {} : { onBehalfOf }),
      id,
      ...(turnId === undefined ? {} : { turn: turnId }),
      ...(signal === undefined ? {} : { signal }),
    });
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
  const local = (
    id: string,
    name: string,
    source: ProposalSource,
    turnId: string | undefined,
    generated: boolean,
  ): ToolCallRecord => {
    const record = createPending({ id, name, source, generatedId: generated, turn: turnId, at: clock.now() });
    records.set(id, record);
    return record;
  };
  /** Proposes a call the stream opened, once its arguments are over, unless it was proposed or ended here. */
  const handOver = (id: string, reading: (call: OpenedCall) => Reading): ToolCallRecord | undefined => {
    const call = opened.get(id);
    const now = records.get(id);
    if (call === undefined || now === undefined || answers.has(id) || now.status !== 'pending') return now;
    return send(id, reading(call), now.turn);
  };
  const settledHere = (id: string, what: string) => settledIn({ answers, records, settled }, id, what);
  return {
    get tools() {
      return parts.tools.list();
    },
    limits,
    propose(input, proposeOptions) {
      const reading = readInput(input, limits);
      const said = reading.ok ? reading.proposal.id : reading.id;
      const id = proposeOptions?.id ?? said ?? generateId();
      const known = records.get(id);
      if (known !== undefined) return known;
      const turnId = turnOptions.turn ?? proposeOptions?.turn;
      local(
        id,
        reading.ok ? reading.proposal.name : (reading.name ?? ''),
        reading.ok ? reading.proposal.source : reading.source,
        turnId,
        said === undefined && proposeOptions?.id === undefined,
      );
      return send(id, reading, turnId);
    },
    get: (id) => records.get(id),
    settled: async (id) => once(await settledHere(id, 'turn.settled')),
    async stopped(id) {
      const first = answers.has(id) ? await answers.get(id) : undefined;
      if (first === undefined) return once(await settledHere(id, 'turn.stopped'));
      return once(await stoppedAfter(first, gate.stopped, records));
    },
    cancel(id, reason) {
      const now = records.get(id);
      if (now === undefined || isTerminal(now.status)) return false;
      const answer = answers.get(id);
      if (answer === undefined) {
        // Opened by the stream but never proposed: it ends here.
        records.set(id, cancelledHere(now, reason, clock.now()));
        return true;
      }
      void answer
        .then(() => cancel(id, reason === undefined ? { principal } : { principal, reason }))
        .catch(onError);
      return true;
    },
    stream: {
      open(init) {
        const id = init.id ?? generateId();
        const known = records.get(id);
        if (known !== undefined) return known;
        opened.set(id, { name: init.name, source: init.source });
        // The app's turn id, when it gave one, names the turn; else the reader's (the provider's response id).
        return local(id, init.name, init.source, turnOptions.turn ?? init.turn, init.id === undefined);
      },
      preview(id, preview) {
        const now = records.get(id);
        if (now?.status === 'pending' && !answers.has(id)) records.set(id, { ...now, preview });
      },
      close: (id, rawArguments) =>
        handOver(id, (call) => ({
          ok: true,
          proposal: { id, name: call.name, arguments: rawArguments, source: call.source },
        })),
      truncate: (id, message) =>
        handOver(id, (call) => ({ ok: false, reason: truncatedReason(message), id, ...call })),
      refuse: (id, reason) => handOver(id, (call) => ({ ok: false, reason: refusal(reason), id, ...call })),
      end(turn) {
        if (ended || gate.closed === undefined) return;
        ended = true;
        const ending = turnEnd(
          turn,
          { session, principal, turn: turnOptions.turn },
          { records, answers },
          generateId,
        );
        if (ending !== undefined) recorded = gate.closed(ending);
      },
    },
  };
}

/**
 * The turn's records by id, kept current from the keeper's moves while one of them has not ended
 * (and no longer: a turn may be kept long after its calls are over).
 */
function watchedRecords(keeper: GateParts['keeper']) {
  const records = new Map<string, ToolCallRecord>();
  let stopWatching: (() => void) | undefined;
  return {
    records,
    watch: (): void => {
      stopWatching ??= keeper.onMoved((call) => {
        if (records.has(call.id)) records.set(call.id, call);
      });
    },
    unwatchWhenDone: (): void => {
      for (const record of records.values()) if (!isTerminal(record.status)) return;
      stopWatching?.();
      stopWatching = undefined;
    },
  };
}

/**
 * A call of the turn once it has ended: at once when it ended here or on its first answer, else
 * when the gate says it ended.
 */
async function settledIn(
  turn: {
    readonly answers: ReadonlyMap<string, Promise<ToolCallRecord>>;
    readonly records: Map<string, ToolCallRecord>;
    readonly settled: TurnCalls['settled'];
  },
  id: string,
  what: string,
): Promise<SettledCall> {
  const answer = turn.answers.get(id);
  const now = turn.records.get(id);
  if (answer === undefined) {
    if (now !== undefined && isTerminal(now.status)) return now as SettledCall;
    throw new Error(`${what}: call "${id}" was not proposed in this turn.`);
  }
  const first = await answer;
  if (isTerminal(first.status)) return first as SettledCall;
  const done = await turn.settled(id);
  if (done !== undefined) turn.records.set(id, done);
  return done ?? (first as SettledCall);
}

/**
 * The turn as it is recorded once its stream is over: named by the app's turn id, else the
 * stream's (the provider's response id), else its first call's; with each of its calls and the
 * answer its proposal got. `undefined` when none of the stream's calls is the turn's.
 */
function turnEnd(
  streamed: { readonly id: string | undefined; readonly calls: readonly string[] },
  who: { readonly session: string; readonly principal: string; readonly turn: string | undefined },
  book: {
    readonly records: ReadonlyMap<string, ToolCallRecord>;
    readonly answers: ReadonlyMap<string, Promise<ToolCallRecord>>;
  },
  generateId: () => string,
): TurnEnd | undefined {
  const ids = streamed.calls.filter((id) => book.records.has(id));
  if (ids.length === 0) return undefined;
  return {
    session: who.session,
    principal: who.principal,
    id: who.turn ?? streamed.id ?? book.records.get(ids[0] as string)?.turn ?? generateId(),
    given: who.turn !== undefined,
    calls: ids.map((call) => ({
      id: call,
      answer: book.answers.get(call) ?? (book.records.get(call) as ToolCallRecord),
    })),
  };
}

/** A call the stream opened: its name and where it came from. */
interface OpenedCall {
  readonly name: string;
  readonly source: ProposalSource;
}

/**
 * A call cancelled before it was proposed: it ends in the turn, and nothing of it reaches the ledger.
 */
function cancelledHere(now: ToolCallRecord, reason: string | undefined, at: number): ToolCallRecord {
  const why = { code: 'user_cancelled', message: textOf(reason, 'the user cancelled this call') } as const;
  return {
    ...now,
    status: 'cancelled',
    reason: why,
    preview: undefined,
    history: [...now.history, { status: 'cancelled', at, reason: why }],
    updatedAt: at,
  } as ToolCallRecord;
}

/**
 * Where a call proposed in a turn comes to rest: its first resting point when it waits for a person
 * or has ended; one that runs is followed until it ends or is held in doubt (a person must check
 * what happened).
 */
async function stoppedAfter(
  first: ToolCallRecord,
  stopped: (id: string) => Promise<ToolCallRecord | undefined>,
  records: Map<string, ToolCallRecord>,
): Promise<ToolCallRecord> {
  if (first.status !== 'executing' || first.doubt !== undefined) return first;
  const now = (await stopped(first.id)) ?? first;
  records.set(now.id, now);
  return now;
}
