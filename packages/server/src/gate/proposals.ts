import { hash } from 'node:crypto';
import {
  canonicalJson,
  copyValue,
  createPending,
  messageOf,
  readProposal,
  type MoveNote,
  type ProposalReading,
} from '@toolgate/core/kit';
import {
  isTerminal,
  type Limits,
  type ProposalSource,
  type Reason,
  type RejectedCode,
  type ToolCallRecord,
} from '@toolgate/core';
import { printable, storable } from '../ledger/guards/storable.ts';
import { readRecord } from '../ledger/stored-record.ts';
import { COMPENSATION, isCompensationId } from '../outcomes/compensation-tool.ts';
import { abortMessage, proposalSignal } from './abort-signal.ts';
import { cancel } from './decisions.ts';
import type { GateParts } from './parts.ts';
import type { ServerProposeOptions } from './server-gate.ts';

/**
 * A proposal as read, or as a stream reader closed it (a truncated call is refused as read).
 *
 * @example
 * const reading: Reading = { ok: false, reason: truncatedReason('the stream ended'), id: 'call_1', name: 'transfer', source: 'openai-chat' };
 */
export type Reading =
  | ProposalReading
  | {
      readonly ok: false;
      readonly reason: Reason<RejectedCode>;
      readonly id?: string;
      readonly name?: string;
      readonly source: ProposalSource;
    };

/**
 * Reads a model's proposal; input that cannot be read at all is an `invalid_shape` reading, never a throw.
 *
 * @example
 * const reading = readInput({ id: 'call_1', name: 'transfer', arguments: '{"amount_cents":2000}' }, limits);
 */
export function readInput(input: unknown, limits: Limits): ProposalReading {
  try {
    return readProposal(input, limits);
  } catch (error) {
    return {
      ok: false,
      source: 'normalised',
      reason: { code: 'invalid_shape', message: `the proposal could not be read: ${messageOf(error)}` },
    };
  }
}

/**
 * Proposes what was read from a proposal (or what a stream reader assembled): a known id answers
 * its call, a new one becomes a draft that the pipeline checks and the keeper writes at its first
 * durable move. Resolves at the call's first resting point.
 *
 * @example
 * const call = await submit(parts, readInput(input, limits), { session: 'chat_1', principal: 'user_42' });
 */
export async function submit(
  parts: Pick<
    GateParts,
    'settings' | 'ledger' | 'tools' | 'keeper' | 'pipeline' | 'waiters' | 'follower' | 'sessions'
  >,
  proposed: Reading,
  proposeOptions: ServerProposeOptions,
  how: { readonly generated?: boolean; readonly signal?: AbortSignal } = {},
): Promise<ToolCallRecord> {
  const { keeper, pipeline, waiters, sessions, settings } = parts;
  const { session, principal } = proposeOptions;
  const said = proposed.ok ? proposed.proposal.id : proposed.id;
  const id = proposeOptions.id ?? said ?? settings.generateId();
  // Model input the ledger cannot hold is refused as model input: an id it cannot key is answered
  // and not stored; a name it cannot hold is stored as shown, and rejected.
  if (!storable(id))
    return localRejection(
      id,
      proposed,
      { code: 'invalid_shape', message: 'the call id holds a NUL character, which no call id may hold' },
      settings.clock.now(),
    );
  if (isCompensationId(id))
    return localRejection(
      id,
      proposed,
      {
        code: 'invalid_shape',
        message: `call ids ending in "${COMPENSATION}" are kept for compensations the gate runs; send this call with an id of its own`,
      },
      settings.clock.now(),
    );
  const reading = storableName(proposed, id);
  const proposalHash = hashProposal(reading, settings.limits);

  // A known id is answered without a second check: a draft beside a stored call of the same id
  // would take the moves (a commit, a cancel) meant for the stored one.
  const known = await keeper.read(id);
  const unauthorized = () =>
    localRejection(
      id,
      reading,
      { code: 'unauthorized', message: `"${principal}" may not propose calls in session "${session}"` },
      settings.clock.now(),
    );
  if (known !== undefined) {
    // Answered exactly as a new id in that session would be: the refusal shows nothing of the call.
    if (!(await sessions.mayView(principal, session, await sessions.owner(session)))) return unauthorized();
    const record = known.draft
      ? ((await waiters.untilResting(id).catch(() => undefined)) ?? known.record)
      : known.record;
    return answerKnown(parts, id, record, proposalHash, session, principal, reading);
  }

  const owner = (await sessions.owner(session, principal)) ?? principal;
  if (!(await sessions.mayView(principal, session, owner))) return unauthorized();
  const name = reading.ok ? reading.proposal.name : (reading.name ?? '');
  const source = reading.ok ? reading.proposal.source : reading.source;
  const pending = createPending({
    id,
    name,
    source,
    generatedId: how.generated ?? (proposeOptions.id === undefined && said === undefined),
    turn: proposeOptions.turn,
    at: settings.clock.now(),
  });
  const { onBehalfOf } = proposeOptions;
  const record = onBehalfOf === undefined ? pending : Object.freeze({ ...pending, onBehalfOf });
  if (keeper.drafts.has(id))
    return answerKnown(
      parts,
      id,
      (await waiters.untilResting(id).catch(() => undefined)) ?? record,
      proposalHash,
      session,
      principal,
      reading,
    );
  parts.tools.pin(id);
  keeper.draft({
    record,
    session,
    owner,
    proposalHash,
    moves: [{ from: undefined, to: record, actor: principal }],
  });
  const rest = waiters.untilResting(id);
  const note: MoveNote = { actor: principal };
  if (how.signal?.aborted === true)
    void keeper.move(
      id,
      { type: 'cancel', reason: { code: 'user_cancelled', message: abortMessage(how.signal) } },
      note,
    );
  else if (!reading.ok) pipeline.reject(id, reading.reason, note);
  else pipeline.resolve(id, name, reading.proposal.arguments, reading.proposal.truncated === true, [], note);
  const call = await rest;
  // Another instance wrote this id first: answer as for an id proposed again.
  if (call === undefined) return answerKnown(parts, id, record, proposalHash, session, principal, reading);
  if (call.status === 'executing') parts.follower.guard(id);
  return call;
}

/**
 * Proposes a reading; with a signal, an abort before the call ends cancels it (an abort that races
 * the call's end changes nothing, not even the audit trail).
 *
 * @example
 * const call = await proposeReading(parts, readInput(input, limits), { session, principal, signal: request.signal });
 */
export async function proposeReading(
  parts: Pick<
    GateParts,
    'settings' | 'ledger' | 'tools' | 'keeper' | 'pipeline' | 'waiters' | 'follower' | 'sessions'
  >,
  reading: Reading,
  proposeOptions: ServerProposeOptions,
): Promise<ToolCallRecord> {
  const signal = proposalSignal('serverGate.propose', proposeOptions.signal);
  if (signal === undefined) return submit(parts, reading, proposeOptions);
  const said = reading.ok ? reading.proposal.id : reading.id;
  const id = proposeOptions.id ?? said ?? parts.settings.generateId();
  if (!storable(id)) return submit(parts, reading, proposeOptions);
  const { principal } = proposeOptions;
  let cancelling: Promise<unknown> | undefined;
  const onAbort = () => {
    cancelling ??= (async () => {
      const now = parts.waiters.recent(id) ?? (await parts.keeper.read(id))?.record;
      if (now === undefined || !isTerminal(now.status))
        await cancel(parts, id, { principal, reason: abortMessage(signal) });
    })().catch(parts.settings.onError);
  };
  const detach = () => signal.removeEventListener('abort', onAbort);
  // An aborted signal never fires: `submit` cancels a new call itself, and a known one is cancelled below.
  signal.addEventListener('abort', onAbort, { once: true });
  let call: ToolCallRecord;
  try {
    call = await submit(
      parts,
      reading,
      { ...proposeOptions, id },
      { generated: proposeOptions.id === undefined && said === undefined, signal },
    );
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
    return (await parts.keeper.read(id))?.record ?? call;
  }
  parts.follower.settled(id).then(detach, detach);
  return call;
}

/** The same id again: the same call, or a refusal when it carries other arguments. */
async function answerKnown(
  parts: Pick<GateParts, 'settings' | 'ledger' | 'keeper'>,
  id: string,
  record: ToolCallRecord,
  proposalHash: string,
  session: string,
  principal: string,
  reading: Reading,
): Promise<ToolCallRecord> {
  const { ledger, keeper } = parts;
  const stored = await ledger.read((db) =>
    db.selectFrom('toolgate_calls').selectAll().where('id', '=', id).executeTakeFirst(),
  );
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
  const at = parts.settings.clock.now();
  const shown =
    stored.session === session
      ? readRecord(stored.record)
      : localRejection(id, reading, { code: 'unauthorized', message }, at);
  return conflictRecord(shown, message, at);
}

/** A proposal naming a tool with a NUL character, read as the rejection it is (its name shown with U+FFFD). */
function storableName(reading: Reading, id: string): Reading {
  const name = reading.ok ? reading.proposal.name : reading.name;
  if (name === undefined || storable(name)) return reading;
  const reason = {
    code: 'invalid_shape',
    message: 'the tool name holds a NUL character, which no tool name may hold',
  } as const;
  return {
    ok: false,
    reason,
    id,
    name: printable(name),
    source: reading.ok ? reading.proposal.source : reading.source,
  };
}

function localRejection(
  id: string,
  reading: Reading,
  reason: { code: 'unauthorized' | 'invalid_shape'; message: string },
  at: number,
): ToolCallRecord {
  const name = printable(reading.ok ? reading.proposal.name : (reading.name ?? ''));
  const source = reading.ok ? reading.proposal.source : reading.source;
  const pending = createPending({ id, name, source, generatedId: false, turn: undefined, at });
  return {
    ...pending,
    status: 'rejected',
    reason,
    history: [...pending.history, { status: 'rejected', at, reason }],
  } as ToolCallRecord;
}

/**
 * What a proposal said, for telling the same proposal again from another one with the same id.
 *
 * @example
 * hashProposal(readInput(input, limits), limits) === stored.proposal_hash;
 */
export function hashProposal(reading: Reading, limits: Limits): string {
  let said: string;
  if (!reading.ok) said = `unreadable:${reading.reason.code}:${reading.name ?? ''}`;
  else {
    const args = reading.proposal.arguments;
    if (typeof args === 'string')
      said =
        args.length > limits.maxArgumentChars
          ? `too_large:${args.length}:${args.slice(0, 1024)}`
          : canonicalText(args, limits);
    else if (args === undefined) said = '';
    else {
      const copied = copyValue(args, limits);
      said = copied.kind === 'ok' ? canonicalJson(copied.value) : `unreadable:${copied.kind}`;
    }
    said = `${reading.proposal.name}\u0000${said}`;
  }
  return hash('sha256', said);
}

// Equal JSON values are one call: text that parses is hashed as its canonical JSON, so another
// key order or spacing (or the same value sent as an object) is not a conflict. Text that does not
// parse, or that the gate would refuse (too deep, `__proto__`, …), is hashed as sent.
function canonicalText(text: string, limits: Limits): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const copied = copyValue(parsed, limits);
  return copied.kind === 'ok' ? canonicalJson(copied.value) : text;
}

function conflictRecord(original: ToolCallRecord, message: string, at: number): ToolCallRecord {
  const reason = { code: 'id_conflict', message } as const;
  const pending = createPending({
    id: original.id,
    name: original.name,
    source: original.source,
    generatedId: false,
    turn: original.turn,
    at,
  });
  return {
    ...pending,
    status: 'rejected',
    reason,
    history: [...pending.history, { status: 'rejected', at, reason }],
  } as unknown as ToolCallRecord;
}
