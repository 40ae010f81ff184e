import { isTerminal, type Clock, type ToolCallRecord } from '@toolgate/core';
import type { Ledger } from '../ledger/ledger.ts';
import type { TurnSettledHandler } from './ended-turn.ts';
import {
  claimTurn,
  finishTurn,
  readyTurns,
  recordTurn,
  releaseTurn,
  renewTurn,
  turnsOfCall,
  type ClosedTurn,
  type TurnClaim,
  type TurnKey,
} from './turn-rows.ts';

/**
 * A turn view's stream is over: its calls as the reader read them, each with the answer its
 * proposal got (or will get).
 *
 * @example
 * continuations.closed({ session, principal, id: 'turn_1', given: true, calls: [{ id: 'call_1', answer: proposal }] });
 */
export interface TurnEnd {
  readonly session: string;
  readonly principal: string;
  readonly id: string;
  /** The app named the turn (rather than the provider, or nobody). */
  readonly given: boolean;
  readonly calls: readonly {
    readonly id: string;
    readonly answer: Promise<ToolCallRecord> | ToolCallRecord;
  }[];
}

/**
 * Runs `onTurnSettled` once per turn, on whichever process claims it first once its last call has
 * ended: at the turn's end, on each call's end (on any process, through the ledger's tail), and
 * in a sweep every `leaseMs` for turns a dead process or a throwing handler left.
 *
 * @example
 * const continuations = createContinuations({ ledger, clock, leaseMs, instance, onError, generateId, mayView, handler });
 * continuations.ended('call_1');
 */
export interface Continuations {
  /** Records the turn (and runs it, if its calls have all ended); resolves with why it was not recorded, if it was not. */
  readonly closed: (turn: TurnEnd) => Promise<Error | undefined>;
  /** A call ended (here or elsewhere): the turns that waited on it may be ready. */
  readonly ended: (callId: string) => void;
  /** Claims and runs every ready turn nobody holds. */
  readonly sweep: () => Promise<void>;
  /** Stops the sweep and every run's renewal (their signals abort; their claims run out), once turns being recorded are written. */
  readonly stop: () => Promise<void>;
}

/**
 * What the runner works with.
 *
 * @example
 * const deps: ContinuationParts = { ledger, clock, leaseMs: 30_000, instance: 'app-1', onError, generateId, mayView, handler };
 */
export interface ContinuationParts {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly leaseMs: number;
  readonly instance: string;
  readonly onError: (error: unknown) => void;
  readonly generateId: () => string;
  readonly mayView: (principal: string, session: string) => Promise<boolean>;
  readonly handler: TurnSettledHandler;
  /** Sweep on start and every `leaseMs`. */
  readonly sweeping: boolean;
}

const SWEEP_LIMIT = 100;
const keyOf = (key: TurnKey) => JSON.stringify([key.session, key.id]);

/**
 * Builds the runner.
 *
 * @example
 * const continuations = createContinuations(parts);
 */
export function createContinuations(parts: ContinuationParts): Continuations {
  const { ledger, clock, leaseMs, instance, onError, handler } = parts;
  const running = new Map<
    string,
    { readonly controller: AbortController; readonly renewal: { readonly stop: () => void } }
  >();
  const recording = new Set<Promise<unknown>>();
  const timers = new Set<unknown>();
  let stopped = false;

  const later = (ms: number, work: () => void) => {
    const timer = clock.setTimeout(() => {
      timers.delete(timer);
      if (!stopped) work();
    }, ms);
    timers.add(timer);
  };

  /** Starts each turn's run; resolves once each has been claimed or passed over, not when the handlers end. */
  const settleAll = async (keys: readonly TurnKey[]): Promise<void> => {
    await Promise.all(keys.map((key) => claimAndStart(key)));
  };
  const claimAndStart = async (key: TurnKey): Promise<void> => {
    try {
      if (stopped || running.has(keyOf(key))) return;
      const claim = await claimTurn(ledger, key, { instance, now: clock.now(), leaseMs });
      if (claim !== undefined) void run(claim).catch(onError);
    } catch (error) {
      onError(error);
    }
  };

  async function run(claim: TurnClaim): Promise<void> {
    const key = keyOf(claim);
    const controller = new AbortController();
    const renewal = renewWhileRunning(parts, claim, controller);
    running.set(key, { controller, renewal });
    let outcome: { ok: true } | { ok: false; error: unknown };
    try {
      await handler({
        id: claim.id,
        session: claim.session,
        principal: claim.principal,
        calls: claim.calls,
        attempt: claim.attempt,
        signal: controller.signal,
      });
      outcome = { ok: true };
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      renewal.stop();
      running.delete(key);
    }
    if (outcome.ok) {
      if (!(await finishTurn(ledger, claim, clock.now()))) onError(lostClaim(claim, 'its handler resolved'));
      return;
    }
    onError(outcome.error);
    // Retried with the same turn id: here after a pause, or by any process's sweep once it passes.
    const pause = Math.min(leaseMs, 250 * 2 ** Math.min(claim.attempt - 1, 16));
    if (await releaseTurn(ledger, claim, clock.now() + pause)) later(pause, () => void claimAndStart(claim));
  }

  /** Records the turn and claims it if it is ready; answers why it was not recorded, when it was not. */
  async function record(end: TurnEnd): Promise<Error | undefined> {
    const answers = await Promise.allSettled(end.calls.map((call) => Promise.resolve(call.answer)));
    if (answers.some((answer) => answer.status === 'rejected')) {
      return new Error(
        `serverGate.turn: turn "${end.id}" in session "${end.session}" was not recorded, as a call of it did not reach the ledger; onTurnSettled will not run for it.`,
      );
    }
    // A principal who may not see the session had every call refused: no handler acts in that session for them.
    if (!(await parts.mayView(end.principal, end.session))) return undefined;
    const calls = end.calls.map((call, index) => {
      const answer = (answers[index] as PromiseFulfilledResult<ToolCallRecord>).value;
      return isTerminal(answer.status) ? { id: call.id, answer } : { id: call.id };
    });
    let turn: ClosedTurn = { session: end.session, id: end.id, principal: end.principal, calls };
    let result = await recordTurn(ledger, turn, clock.now());
    if (result === 'conflict' && !end.given) {
      // A provider's response id that came again (a scripted or local model repeats them): a turn of its own.
      turn = { ...turn, id: parts.generateId() };
      result = await recordTurn(ledger, turn, clock.now());
    }
    if (result === 'conflict') {
      return new Error(
        `serverGate.turn: turn "${end.id}" in session "${end.session}" is already another turn (other calls, or another principal); this one was not recorded, and onTurnSettled will not run for it.`,
      );
    }
    await claimAndStart(turn);
    return undefined;
  }

  const sweep = async () => {
    if (stopped) return;
    await settleAll(await readyTurns(ledger, clock.now(), SWEEP_LIMIT));
  };
  if (parts.sweeping) {
    const again = () =>
      later(leaseMs, () => {
        sweep().then(again, (error: unknown) => {
          onError(error);
          again();
        });
      });
    sweep().then(again, (error: unknown) => {
      onError(error);
      again();
    });
  }

  return {
    closed(end) {
      if (stopped)
        return Promise.resolve(
          new Error(
            `serverGate.turn: the gate was closed before turn "${end.id}" in session "${end.session}" was recorded.`,
          ),
        );
      const recorded: Promise<Error | undefined> = record(end)
        .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))
        .then((refused) => {
          if (refused !== undefined) onError(refused);
          return refused;
        })
        .finally(() => recording.delete(recorded));
      recording.add(recorded);
      return recorded;
    },
    ended(callId) {
      if (stopped) return;
      turnsOfCall(ledger, callId).then(settleAll, onError);
    },
    sweep,
    async stop() {
      await Promise.all([...recording]);
      stopped = true;
      for (const timer of timers) clock.clearTimeout(timer);
      timers.clear();
      // A handler still running here keeps nothing: its claim runs out unrenewed, and another process may take the turn over then.
      for (const { controller, renewal } of running.values()) {
        renewal.stop();
        controller.abort(new DOMException('The server gate was closed.', 'AbortError'));
      }
    },
  };
}

/** Renews the claim every third of `leaseMs`; a claim that was lost, or ran out unrenewed, aborts the run's signal. */
function renewWhileRunning(
  parts: ContinuationParts,
  claim: TurnClaim,
  controller: AbortController,
): { stop: () => void } {
  const { ledger, clock, leaseMs, onError } = parts;
  let until = clock.now() + leaseMs;
  let timer: unknown;
  let done = false;
  const next = () => {
    timer = clock.setTimeout(() => {
      if (done) return;
      const wanted = clock.now() + leaseMs;
      renewTurn(ledger, claim, wanted).then(
        (held) => {
          if (held) until = wanted;
          else controller.abort(lostClaim(claim, 'it ran'));
          if (held && !done) next();
        },
        (error: unknown) => {
          onError(error);
          if (clock.now() >= until)
            controller.abort(lostClaim(claim, 'it ran, and its lease could not be renewed'));
          else if (!done) next();
        },
      );
    }, leaseMs / 3);
  };
  next();
  return {
    stop() {
      done = true;
      if (timer !== undefined) clock.clearTimeout(timer);
    },
  };
}

function lostClaim(claim: TurnKey, when: string): Error {
  return new Error(
    `onTurnSettled: turn "${claim.id}" in session "${claim.session}" was no longer this process's to run when ${when}: another process may have taken it over.`,
  );
}
