import {
  TOOL_CALL_STATUSES,
  type Issue,
  type ProposalSource,
  type Reason,
  type Repair,
  type ToolCallRecord,
  type ToolCallStatus,
  type Transition,
} from '../record/record.ts';

/**
 * One move in a server gate's ledger, as its event feed sends it. A refusal (a stale approval, a
 * principal who may not decide, an expired approval, a conflicting id…) is an event with
 * `from === to` and `reason.code` naming the refusal; the call itself did not move.
 *
 * @example
 * const event: LedgerEvent = { seq: 7, callId: 'call_1', session: 'chat_1', from: 'awaiting_approval', to: 'executing', actor: 'user_42', at: 1767225600000 };
 */
export interface LedgerEvent {
  /** The ledger's sequence number: starts at 1 and only grows. */
  readonly seq: number;
  readonly callId: string;
  readonly session: string;
  /** `null` for the event that created the call. */
  readonly from: ToolCallStatus | null;
  readonly to: ToolCallStatus;
  /** The principal who made the move, or what did (`null` when the feed names no one). */
  readonly actor: string | null;
  readonly at: number;
  readonly reason?: { readonly code: string; readonly message: string };
}

/**
 * The first message of a fresh event feed: the session's calls as of `seq`.
 *
 * @example
 * const snapshot: FeedSnapshot = { seq: 12, calls: [] };
 */
export interface FeedSnapshot {
  readonly seq: number;
  readonly calls: readonly ToolCallRecord[];
}

/**
 * Every later message of the feed: one ledger event and the call's record after it.
 *
 * @example
 * if (move.event.to === 'committed') applyCommit(move.record);
 */
export interface FeedMove {
  readonly event: LedgerEvent;
  readonly record: ToolCallRecord;
}

/**
 * What reading one message gave: the value, or what is wrong with it, in words for a log.
 * A snapshot keeps the calls it could read and names the ones it could not.
 *
 * @example
 * const reading = readMove(JSON.parse(data));
 * if (!reading.ok) onError(new Error(reading.problem));
 */
export type WireReading<T> =
  | { readonly ok: true; readonly value: T; readonly problems: readonly string[] }
  | { readonly ok: false; readonly problem: string };

const STATUSES: ReadonlySet<unknown> = new Set<ToolCallStatus>(TOOL_CALL_STATUSES);
const SOURCES: ReadonlySet<unknown> = new Set<ProposalSource>([
  'json',
  'openai-chat',
  'openai-responses',
  'anthropic',
  'gemini',
  'mcp',
  'ai-sdk',
  'normalised',
]);
const WITH_REASON: ReadonlySet<ToolCallStatus> = new Set<ToolCallStatus>(['rejected', 'cancelled', 'failed']);
// A call has its validated input from `validated` on; rejected and cancelled calls may end before.
const WITH_INPUT: ReadonlySet<ToolCallStatus> = new Set<ToolCallStatus>([
  'validated',
  'awaiting_approval',
  'executing',
  'committed',
  'failed',
]);

type Fields = { readonly [key: string]: unknown };
const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isStatus = (value: unknown): value is ToolCallStatus => STATUSES.has(value);
const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isSeq = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const own = (fields: Fields, key: string): unknown => (Object.hasOwn(fields, key) ? fields[key] : undefined);
const optionalString = (value: unknown): value is string | undefined | null =>
  value === undefined || value === null || typeof value === 'string';

/**
 * Reads a call record that came over the wire. The feed is not trusted to be well formed: the
 * record must have an id, a known status and source, times, a history that ends in its status, a
 * reason when it ended without committing, and its input once it was validated. What is read is
 * a new record with exactly the fields a record has; anything else the message carried is left out.
 *
 * @example
 * const reading = readRecord(JSON.parse(text));
 * if (reading.ok) records.set(reading.value.id, reading.value);
 */
export function readRecord(value: unknown): WireReading<ToolCallRecord> {
  if (!isFields(value)) return fail('a call record must be an object');
  const id = own(value, 'id');
  const name = own(value, 'name');
  const status = own(value, 'status');
  const source = own(value, 'source');
  const where = typeof id === 'string' ? `call "${id}"` : 'a call record';
  if (typeof id !== 'string' || id === '') return fail(`${where} has no id`);
  if (typeof name !== 'string') return fail(`${where} has no tool name`);
  if (!isStatus(status)) return fail(`${where} has an unknown status ${describe(status)}`);
  if (!SOURCES.has(source)) return fail(`${where} has an unknown source ${describe(source)}`);
  const createdAt = own(value, 'createdAt');
  const updatedAt = own(value, 'updatedAt');
  if (!isTime(createdAt) || !isTime(updatedAt)) return fail(`${where} has no createdAt/updatedAt times`);
  const generatedId = own(value, 'generatedId') ?? false;
  const evicted = own(value, 'evicted') ?? false;
  const turn = own(value, 'turn');
  if (typeof generatedId !== 'boolean' || typeof evicted !== 'boolean' || !optionalString(turn)) {
    return fail(`${where} has a generatedId, evicted or turn of the wrong type`);
  }
  const history = readHistory(own(value, 'history'));
  if (history === undefined) return fail(`${where} has no readable history`);
  if (history[history.length - 1]?.status !== status)
    return fail(`${where} is ${status} but its history ends elsewhere`);
  const repairs = readRepairs(own(value, 'repairs'));
  if (repairs === false) return fail(`${where} has unreadable repairs`);
  let reason: Reason | undefined;
  if (WITH_REASON.has(status)) {
    reason = readReason(own(value, 'reason'));
    if (reason === undefined) return fail(`${where} is ${status} without a reason { code, message }`);
  }
  if (WITH_INPUT.has(status) && !evicted && !Object.hasOwn(value, 'input'))
    return fail(`${where} is ${status} without its input`);
  const record = {
    id,
    name,
    source: source as ProposalSource,
    generatedId,
    turn: turn ?? undefined,
    createdAt,
    updatedAt,
    status,
    history,
    input: own(value, 'input'),
    output: status === 'committed' ? own(value, 'output') : undefined,
    reason,
    preview: status === 'pending' ? own(value, 'preview') : undefined,
    repairs,
    evicted,
    // A server gate's policy state, kept as sent: the page shows it, and decides nothing by it.
    ...(isFields(own(value, 'approval')) ? { approval: own(value, 'approval') } : {}),
    ...(isFields(own(value, 'edit')) ? { edit: own(value, 'edit') } : {}),
    ...outcomeFields(value, status),
  };
  return { ok: true, value: record as ToolCallRecord, problems: [] };
}

/**
 * Reads a ledger event that came over the wire.
 *
 * @example
 * const reading = readLedgerEvent({ seq: 3, callId: 'c1', session: 's', from: 'pending', to: 'validated', actor: 'u1', at: 0 });
 */
export function readLedgerEvent(value: unknown): WireReading<LedgerEvent> {
  if (!isFields(value)) return fail('a ledger event must be an object');
  const { seq, callId, session, from, to, at } = {
    seq: own(value, 'seq'),
    callId: own(value, 'callId'),
    session: own(value, 'session'),
    from: own(value, 'from'),
    to: own(value, 'to'),
    at: own(value, 'at'),
  };
  const actor = own(value, 'actor') ?? null;
  if (!isSeq(seq) || seq === 0) return fail(`a ledger event has no sequence number (got ${describe(seq)})`);
  if (typeof callId !== 'string' || callId === '' || typeof session !== 'string')
    return fail(`event ${seq} names no call or session`);
  if ((from !== null && !isStatus(from)) || !isStatus(to))
    return fail(`event ${seq} moves between unknown statuses ${describe(from)} → ${describe(to)}`);
  if (!isTime(at) || (actor !== null && typeof actor !== 'string'))
    return fail(`event ${seq} has no time or an unreadable actor`);
  const rawReason = own(value, 'reason');
  const reason = rawReason === undefined || rawReason === null ? undefined : readReason(rawReason);
  if (reason === undefined && rawReason !== undefined && rawReason !== null)
    return fail(`event ${seq} has an unreadable reason`);
  const event: LedgerEvent = {
    seq,
    callId,
    session,
    from,
    to,
    actor,
    at,
    ...(reason === undefined ? {} : { reason: { code: reason.code, message: reason.message } }),
  };
  return { ok: true, value: event, problems: [] };
}

/**
 * Reads the `data` of a `snapshot` message. Calls that cannot be read are left out and named in
 * `problems`; the others still arrive.
 *
 * @example
 * const reading = readSnapshot(JSON.parse(message.data));
 */
export function readSnapshot(value: unknown): WireReading<FeedSnapshot> {
  if (!isFields(value)) return fail('a snapshot must be an object { seq, calls }');
  const seq = own(value, 'seq');
  const calls = own(value, 'calls');
  if (!isSeq(seq)) return fail(`a snapshot has no sequence number (got ${describe(seq)})`);
  if (!Array.isArray(calls)) return fail(`snapshot ${seq} has no calls array`);
  const records: ToolCallRecord[] = [];
  const problems: string[] = [];
  for (const call of calls as unknown[]) {
    const reading = readRecord(call);
    if (reading.ok) records.push(reading.value);
    else problems.push(`snapshot ${seq}: ${reading.problem}`);
  }
  return { ok: true, value: { seq, calls: records }, problems };
}

/**
 * Reads the `data` of a `move` message: the event and the record after it, which must be the same
 * call, in the status the event moved it to.
 *
 * @example
 * const reading = readMove(JSON.parse(message.data));
 */
export function readMove(value: unknown): WireReading<FeedMove> {
  if (!isFields(value)) return fail('a move must be an object { event, record }');
  const event = readLedgerEvent(own(value, 'event'));
  if (!event.ok) return event;
  const record = readRecord(own(value, 'record'));
  if (!record.ok) return fail(`event ${event.value.seq}: ${record.problem}`);
  const { seq, callId, to, from } = event.value;
  if (record.value.id !== callId)
    return fail(`event ${seq} is about call "${callId}" but carries call "${record.value.id}"`);
  // A refusal leaves the call where it was; every other event names the status the record is in.
  if (from !== to && record.value.status !== to)
    return fail(`event ${seq} moves call "${callId}" to ${to} but its record is ${record.value.status}`);
  return { ok: true, value: { event: event.value, record: record.value }, problems: [] };
}

/**
 * What a record says about an outcome nobody saw, kept only in the shape a server gate writes it:
 * a held call's doubt (only while it runs), its attempt, the evidence it was committed on, its
 * compensation, and the call a compensation undoes. The page shows them and decides nothing by them.
 */
function outcomeFields(value: Fields, status: ToolCallStatus): Fields {
  const fields: Record<string, unknown> = {};
  const doubt = own(value, 'doubt');
  if (
    status === 'executing' &&
    isFields(doubt) &&
    isTime(own(doubt, 'at')) &&
    typeof own(doubt, 'message') === 'string'
  )
    fields['doubt'] = { at: own(doubt, 'at'), message: own(doubt, 'message') };
  const attempt = own(value, 'attempt');
  if (typeof attempt === 'number' && Number.isSafeInteger(attempt) && attempt > 1)
    fields['attempt'] = attempt;
  const evidence = own(value, 'evidence');
  if (status === 'committed' && isFields(evidence) && isTime(own(evidence, 'at'))) {
    const source = own(evidence, 'source') === 'person' ? 'person' : 'downstream';
    const by = own(evidence, 'by');
    const note = own(evidence, 'note');
    fields['evidence'] = {
      source,
      at: own(evidence, 'at'),
      ...(typeof by === 'string' ? { by } : {}),
      ...(typeof note === 'string' ? { note } : {}),
    };
  }
  const compensation = own(value, 'compensation');
  if (
    status === 'committed' &&
    isFields(compensation) &&
    typeof own(compensation, 'id') === 'string' &&
    isStatus(own(compensation, 'status'))
  )
    fields['compensation'] = compensation;
  const compensates = own(value, 'compensates');
  if (typeof compensates === 'string') fields['compensates'] = compensates;
  return fields;
}

function readHistory(value: unknown): Transition[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const history: Transition[] = [];
  for (const step of value as unknown[]) {
    if (!isFields(step)) return undefined;
    const status = own(step, 'status');
    const at = own(step, 'at');
    if (!isStatus(status) || !isTime(at)) return undefined;
    const rawReason = own(step, 'reason');
    if (rawReason === undefined || rawReason === null) {
      history.push({ status, at });
      continue;
    }
    const reason = readReason(rawReason);
    if (reason === undefined) return undefined;
    history.push({ status, at, reason });
  }
  return history;
}

function readReason(value: unknown): Reason | undefined {
  if (!isFields(value)) return undefined;
  const code = own(value, 'code');
  const message = own(value, 'message');
  if (typeof code !== 'string' || code === '' || typeof message !== 'string') return undefined;
  const rawIssues = own(value, 'issues');
  if (rawIssues === undefined || rawIssues === null) return { code, message } as Reason;
  if (!Array.isArray(rawIssues)) return undefined;
  const issues: Issue[] = [];
  for (const issue of rawIssues as unknown[]) {
    if (!isFields(issue)) return undefined;
    const path = own(issue, 'path');
    const text = own(issue, 'message');
    const keyword = own(issue, 'keyword');
    if (
      typeof path !== 'string' ||
      typeof text !== 'string' ||
      (keyword !== undefined && typeof keyword !== 'string')
    )
      return undefined;
    issues.push(keyword === undefined ? { path, message: text } : { path, message: text, keyword });
  }
  // The server may send codes this version of the browser does not know yet; they are shown as sent.
  return { code, message, issues } as Reason;
}

function readRepairs(value: unknown): Repair[] | undefined | false {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return false;
  const repairs: Repair[] = [];
  for (const repair of value as unknown[]) {
    if (!isFields(repair)) return false;
    const kind = own(repair, 'kind');
    const path = own(repair, 'path');
    const message = own(repair, 'message');
    if (typeof kind !== 'string' || typeof path !== 'string' || typeof message !== 'string') return false;
    repairs.push({ kind, path, message });
  }
  return repairs;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

const fail = (problem: string): { readonly ok: false; readonly problem: string } => ({ ok: false, problem });
