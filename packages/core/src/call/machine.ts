import type {
  CancelledCode,
  Evidence,
  FailedCode,
  InputEdit,
  Issue,
  PendingCall,
  ProposalSource,
  Reason,
  ReasonCode,
  RejectedCode,
  Repair,
  ToolCallRecord,
  ToolCallStatus,
  Transition,
} from '../record/record.ts';
import { textOf } from '../record/text.ts';

/**
 * Everything that can happen to a call. The gate is the only sender; `transition` decides.
 *
 * @example
 * const event: CallEvent = { type: 'cancel', reason: { code: 'user_cancelled', message: 'Cancelled by the user' } };
 */
export type CallEvent =
  | { readonly type: 'preview'; readonly preview: unknown }
  | { readonly type: 'validate'; readonly input: unknown; readonly repairs?: readonly Repair[] }
  | { readonly type: 'await_approval' }
  | { readonly type: 'execute'; readonly edit?: { readonly input: unknown; readonly edit: InputEdit } }
  | {
      readonly type: 'commit';
      readonly output: unknown;
      /** Committed on evidence rather than its run's own answer (`reconcile`, or a person's `resolve`). */
      readonly evidence?: Omit<Evidence, 'at'>;
    }
  | { readonly type: 'doubt'; readonly message: string }
  | { readonly type: 'rerun' }
  | { readonly type: 'reject'; readonly reason: Reason<RejectedCode> }
  | { readonly type: 'cancel'; readonly reason: Reason<CancelledCode> }
  | { readonly type: 'fail'; readonly reason: Reason<FailedCode> };

const TARGET = {
  preview: 'pending',
  validate: 'validated',
  await_approval: 'awaiting_approval',
  execute: 'executing',
  commit: 'committed',
  doubt: 'executing',
  rerun: 'executing',
  reject: 'rejected',
  cancel: 'cancelled',
  fail: 'failed',
} as const satisfies Record<CallEvent['type'], ToolCallStatus>;

/** `true` allows the edge with no reason; a list allows it only with one of those reason codes. */
type Edge = true | readonly ReasonCode[];

/**
 * Every move a call may make. Anything not listed here is refused, which is what keeps a terminal
 * call terminal and stops a late tool result from committing after a cancel.
 *
 * @example
 * Object.keys(ALLOWED_TRANSITIONS.executing); // ['committed', 'cancelled', 'failed']
 */
export const ALLOWED_TRANSITIONS: Readonly<
  Record<ToolCallStatus, Readonly<Partial<Record<ToolCallStatus, Edge>>>>
> = {
  pending: {
    pending: true,
    validated: true,
    rejected: [
      'invalid_json',
      'invalid_shape',
      'unknown_tool',
      'tool_unavailable',
      'invalid_arguments',
      'too_large',
      'too_deep',
      'truncated',
    ],
    cancelled: ['user_cancelled'],
  },
  validated: {
    awaiting_approval: true,
    executing: true,
    rejected: ['unauthorized', 'budget_exceeded'],
    cancelled: ['user_cancelled'],
  },
  awaiting_approval: {
    executing: true,
    cancelled: ['approval_denied', 'approval_expired', 'user_cancelled'],
  },
  executing: {
    committed: true,
    cancelled: ['tool_cancelled', 'user_cancelled', 'timeout'],
    failed: ['tool_error', 'output_invalid', 'commit_error', 'interrupted'],
  },
  committed: {},
  cancelled: {},
  rejected: {},
  failed: {},
};

/**
 * The pure transition function: the next record, or `undefined` when the move is not allowed
 * (the call is terminal, the event does not apply to its status, or the reason code does not fit).
 * A `preview` event updates a pending call without adding to its history.
 *
 * @example
 * const next = transition(call, { type: 'execute' }, Date.now());
 * if (!next) console.warn(`${call.status} cannot start executing`);
 */
export function transition(call: ToolCallRecord, event: CallEvent, at: number): ToolCallRecord | undefined {
  // A running call whose outcome nobody can tell waits for a person: only their word (or the
  // downstream's) ends it, never a cancel or a failure that would tell the model nothing happened.
  if (call.doubt !== undefined && event.type !== 'commit' && event.type !== 'rerun') return undefined;
  if (event.type === 'doubt' || event.type === 'rerun') return again(call, event, at);
  const to = TARGET[event.type];
  const edge = ALLOWED_TRANSITIONS[call.status][to];
  if (edge === undefined) return undefined;
  const given = 'reason' in event ? event.reason : undefined;
  if (edge !== true && (given === undefined || !edge.includes(given.code))) return undefined;
  const reason = given === undefined ? undefined : textReason(given);
  if (event.type === 'preview')
    return record(
      call,
      'pending',
      at,
      call.history,
      undefined,
      undefined,
      undefined,
      event.preview,
      call.repairs,
    );

  const step: Transition = Object.freeze(
    reason === undefined ? { status: to, at } : { status: to, at, reason },
  );
  const history = Object.freeze(appended(call.history, step));
  switch (event.type) {
    case 'validate':
      return record(
        call,
        'validated',
        at,
        history,
        event.input,
        undefined,
        undefined,
        undefined,
        repairsAfter(call, event),
      );
    case 'execute':
      if (event.edit === undefined)
        return record(call, to, at, history, call.input, undefined, undefined, undefined, call.repairs);
      // A person's edit: the input that runs is theirs, and the record keeps what the model proposed.
      return Object.freeze({
        ...record(call, to, at, history, event.edit.input, undefined, undefined, undefined, call.repairs),
        edit: event.edit.edit,
      });
    case 'commit': {
      const committed = record(
        call,
        'committed',
        at,
        history,
        call.input,
        event.output,
        undefined,
        undefined,
        call.repairs,
      );
      if (event.evidence === undefined) return committed;
      return Object.freeze({ ...committed, evidence: Object.freeze(evidenceOf(event.evidence, at)) });
    }
    default:
      return record(call, to, at, history, call.input, undefined, reason, undefined, call.repairs);
  }
}

/**
 * Two moves made as one, `validate` then `execute`, for a keeper that knows nothing can read the
 * call between them: the record `transition` answers after both (its history has both steps, each
 * at its own time), without making the `validated` record that only the next move would read.
 * `undefined` where `transition` would refuse the first move.
 *
 * @example
 * const running = validateAndExecute(pending, { type: 'validate', input }, validatedAt, Date.now());
 */
export function validateAndExecute(
  call: ToolCallRecord,
  event: Extract<CallEvent, { type: 'validate' }>,
  validatedAt: number,
  executingAt: number,
): ToolCallRecord | undefined {
  // Pending is the only status `validate` leaves, and `validated` may always go on to `executing`.
  if (call.status !== 'pending' || call.doubt !== undefined) return undefined;
  const validated: Transition = Object.freeze({ status: 'validated', at: validatedAt });
  const executing: Transition = Object.freeze({ status: 'executing', at: executingAt });
  const history = Object.freeze(appended(appended(call.history, validated), executing));
  return record(
    call,
    'executing',
    executingAt,
    history,
    event.input,
    undefined,
    undefined,
    undefined,
    repairsAfter(call, event),
  );
}

/** The repairs a call's record keeps once `event` validated it. */
function repairsAfter(
  call: ToolCallRecord,
  event: Extract<CallEvent, { type: 'validate' }>,
): readonly Repair[] | undefined {
  return event.repairs === undefined || event.repairs.length === 0
    ? call.repairs
    : frozenRepairs(event.repairs);
}

/**
 * A history with one more step, in an array of exactly its length: a spread (`[...history, step]`)
 * leaves room to grow, and a settled call's history is kept for the gate's life (a 4-step history
 * took 226 bytes spread, 82 built to size).
 */
function appended(history: readonly Transition[], step: Transition): Transition[] {
  switch (history.length) {
    case 1:
      return [history[0] as Transition, step];
    case 2:
      return [history[0] as Transition, history[1] as Transition, step];
    case 3:
      return [history[0] as Transition, history[1] as Transition, history[2] as Transition, step];
    default: {
      const next = history.slice();
      next.push(step);
      return next;
    }
  }
}

/**
 * A running call that stays running: held in doubt for a person (`doubt`), or run again after the
 * downstream (or a person) said its effect never happened (`rerun`: the next attempt, doubt cleared).
 * Neither adds to the history, which lists statuses.
 */
function again(
  call: ToolCallRecord,
  event: Extract<CallEvent, { type: 'doubt' | 'rerun' }>,
  at: number,
): ToolCallRecord | undefined {
  if (call.status !== 'executing') return undefined;
  const base = record(
    call,
    'executing',
    at,
    call.history,
    call.input,
    undefined,
    undefined,
    undefined,
    call.repairs,
  );
  if (event.type === 'rerun') return Object.freeze({ ...base, attempt: (call.attempt ?? 1) + 1 });
  return Object.freeze({
    ...base,
    doubt: Object.freeze({
      at,
      message: typeof event.message === 'string' ? event.message : textOf(event.message),
    }),
  });
}

function evidenceOf(evidence: Omit<Evidence, 'at'>, at: number): Evidence {
  const source = evidence.source === 'person' ? 'person' : 'downstream';
  return {
    source,
    ...(typeof evidence.by === 'string' ? { by: evidence.by } : {}),
    ...(evidence.note === undefined ? {} : { note: textOf(evidence.note) }),
    at,
  };
}

/**
 * A reason as the record keeps it: its message and each issue's path and message as text, whatever
 * the sender passed (a model reads them, a person sees them), and frozen, so that no listener can
 * change what the audit trail and the record say.
 */
function textReason(reason: Reason): Reason {
  const message = typeof reason.message === 'string' ? reason.message : textOf(reason.message);
  if (reason.issues === undefined) return Object.freeze({ code: reason.code, message });
  const issues: readonly unknown[] = Array.isArray(reason.issues) ? reason.issues : [];
  return Object.freeze({ code: reason.code, message, issues: Object.freeze(issues.map(textIssue)) });
}

function textIssue(issue: unknown): Issue {
  const { path, message, keyword } = (typeof issue === 'object' && issue !== null ? issue : {}) as Partial<
    Record<keyof Issue, unknown>
  >;
  const text = {
    path: typeof path === 'string' ? path : '',
    message: typeof message === 'string' ? message : textOf(message),
  };
  return Object.freeze(typeof keyword === 'string' ? { ...text, keyword } : text);
}

function frozenRepairs(repairs: readonly Repair[]): readonly Repair[] {
  return Object.freeze(
    repairs.map((repair) =>
      Object.freeze({
        kind: textOf(repair.kind),
        path: textOf(repair.path),
        message: textOf(repair.message),
      }),
    ),
  );
}

/**
 * Builds a record with every key in one order, so that all records share one hidden class: a
 * gate in a long chat makes several per call, and spreading conditional keys was measurably slow.
 */
function record(
  call: ToolCallRecord,
  status: ToolCallStatus,
  updatedAt: number,
  history: readonly Transition[],
  input: unknown,
  output: unknown,
  reason: Reason | undefined,
  preview: unknown,
  repairs: readonly Repair[] | undefined,
): ToolCallRecord {
  // Frozen, as the input and output in it are (the pipeline snapshots them once, on the way in): a
  // record is a snapshot no one can change. `preview` is only a draft and stays as the reader made it.
  const next = {
    id: call.id,
    name: call.name,
    source: call.source,
    generatedId: call.generatedId,
    turn: call.turn,
    createdAt: call.createdAt,
    updatedAt,
    status,
    history,
    input,
    output,
    reason,
    preview,
    repairs,
    evicted: false,
  } as { -readonly [K in keyof ToolCallRecord]: ToolCallRecord[K] };
  // Only a server gate's calls carry these; the others keep the smaller shape.
  if (call.approval !== undefined) next.approval = call.approval;
  if (call.onBehalfOf !== undefined) next.onBehalfOf = call.onBehalfOf;
  if (call.edit !== undefined) next.edit = call.edit;
  if (call.attempt !== undefined) next.attempt = call.attempt;
  if (call.compensates !== undefined) next.compensates = call.compensates;
  return Object.freeze(next) as ToolCallRecord;
}

/**
 * A new call, `pending`, as the gate creates it when a proposal arrives or a stream names a tool.
 *
 * @example
 * const call = createPending({ id: 'call_1', name: 'charge', source: 'openai-chat', generatedId: false, turn: undefined, at: Date.now() });
 */
export function createPending(init: {
  readonly id: string;
  readonly name: string;
  readonly source: ProposalSource;
  readonly generatedId: boolean;
  readonly turn: string | undefined;
  readonly at: number;
}): PendingCall {
  return Object.freeze({
    id: init.id,
    name: init.name,
    source: init.source,
    generatedId: init.generatedId,
    turn: init.turn,
    createdAt: init.at,
    updatedAt: init.at,
    status: 'pending',
    history: Object.freeze([Object.freeze({ status: 'pending', at: init.at } as const)]),
    input: undefined,
    output: undefined,
    reason: undefined,
    preview: undefined,
    repairs: undefined,
    evicted: false,
  });
}
