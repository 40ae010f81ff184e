/**
 * Where a call is in its life. The last four are terminal: a call that reaches one never moves again.
 *
 * @example
 * const done: ToolCallStatus[] = ['committed', 'cancelled', 'rejected', 'failed'];
 */
export type ToolCallStatus =
  | 'pending'
  | 'validated'
  | 'awaiting_approval'
  | 'executing'
  | 'committed'
  | 'cancelled'
  | 'rejected'
  | 'failed';

/**
 * Every status, in the order of a call's life: what the audit log numbers its moves by and what
 * the wire accepts.
 *
 * @example
 * TOOL_CALL_STATUSES.includes(status);
 */
export const TOOL_CALL_STATUSES: readonly ToolCallStatus[] = [
  'pending',
  'validated',
  'awaiting_approval',
  'executing',
  'committed',
  'cancelled',
  'rejected',
  'failed',
];

/**
 * The statuses a call can end in.
 *
 * @example
 * const status: TerminalStatus = 'rejected';
 */
export type TerminalStatus = 'committed' | 'cancelled' | 'rejected' | 'failed';

/**
 * Why a proposal was refused before anything ran.
 *
 * @example
 * const code: RejectedCode = 'invalid_arguments';
 */
export type RejectedCode =
  | 'invalid_json'
  | 'invalid_shape'
  | 'unknown_tool'
  | 'tool_unavailable'
  | 'invalid_arguments'
  | 'too_large'
  | 'too_deep'
  | 'unauthorized'
  | 'truncated'
  | 'id_conflict'
  | 'budget_exceeded';

/**
 * Why a call was stopped without an error.
 *
 * @example
 * const code: CancelledCode = 'approval_denied';
 */
export type CancelledCode =
  'tool_cancelled' | 'user_cancelled' | 'approval_denied' | 'approval_expired' | 'timeout';

/**
 * Why a call that ran did not commit.
 *
 * @example
 * const code: FailedCode = 'tool_error';
 */
export type FailedCode = 'tool_error' | 'output_invalid' | 'commit_error' | 'interrupted';

/**
 * Every reason code a call can end with.
 *
 * @example
 * const code: ReasonCode = 'timeout';
 */
export type ReasonCode = RejectedCode | CancelledCode | FailedCode;

/**
 * One thing wrong with a value: a JSON pointer to it (`''` is the whole value), what is wrong,
 * and the schema keyword that caught it when the validator reports one.
 *
 * @example
 * const issue: Issue = { path: '/amount_cents', message: 'must be integer (got string "12.50")', keyword: 'type' };
 */
export interface Issue {
  readonly path: string;
  readonly message: string;
  readonly keyword?: string;
}

/**
 * Why a call ended the way it did; `issues` lists each offending value for `invalid_arguments`
 * and `output_invalid`.
 *
 * @example
 * const reason: Reason = { code: 'user_cancelled', message: 'Cancelled by the user' };
 */
export interface Reason<C extends ReasonCode = ReasonCode> {
  readonly code: C;
  readonly message: string;
  readonly issues?: readonly Issue[];
}

/**
 * One entry of a call's history: the status it moved to, when, and why.
 *
 * @example
 * const step: Transition = { status: 'pending', at: Date.now() };
 */
export interface Transition {
  readonly status: ToolCallStatus;
  readonly at: number;
  readonly reason?: Reason;
}

/**
 * Which wire format a call arrived in.
 *
 * @example
 * const source: ProposalSource = 'anthropic';
 */
export type ProposalSource =
  'json' | 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini' | 'mcp' | 'ai-sdk' | 'normalised';

/**
 * A change made to a model's arguments by an opt-in repair policy before validation.
 *
 * @example
 * const repair: Repair = { kind: 'double_encoded', path: '', message: 'decoded a JSON string inside the arguments string' };
 */
export interface Repair {
  readonly kind: string;
  readonly path: string;
  readonly message: string;
}

interface RecordBase {
  readonly id: string;
  readonly name: string;
  readonly source: ProposalSource;
  /** True when the model sent no id (Gemini often does not) and the gate made one up. */
  readonly generatedId: boolean;
  /** Groups the calls of one assistant turn, when the caller says which turn a call belongs to. */
  readonly turn: string | undefined;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly history: readonly Transition[];
  /** Repairs applied to the arguments, in order, when the tool opted in to repair. */
  readonly repairs: readonly Repair[] | undefined;
  /**
   * True when `retain` dropped this settled call from the gate: it is still known (so it is never
   * run again) but its `input` and `output` are no longer held.
   */
  readonly evicted: boolean;
  /** Where the people deciding this call stand (a server gate's quorum, a budget that sent it to them). */
  readonly approval?: ApprovalState;
  /** On a server gate: the person an agent proposed this call for (the requester), when it said. */
  readonly onBehalfOf?: string;
  /** Set when a person changed the input before approving: what the model proposed and what changed. */
  readonly edit?: InputEdit;
  /**
   * Set on an `executing` call whose outcome nobody can tell (its run was cut off or threw, and
   * `reconcile` could not say): it is held for a person, and nothing runs it again by itself.
   */
  readonly doubt?: Doubt;
  /** Which run of the tool this is, from 1; set once a call was run again after `not_executed`. */
  readonly attempt?: number;
  /** Set on a call committed without its run's own answer: on whose word it was settled. */
  readonly evidence?: Evidence;
  /** Set on a committed call someone asked to undo: its compensation call, and how that ended. */
  readonly compensation?: CompensationLink;
  /** Set on a compensation call (`${id}:compensate`): the id of the committed call it undoes. */
  readonly compensates?: string;
}

/**
 * Why a running call's outcome is unknown: since when, and what was tried (what cut the run off,
 * what `reconcile` answered). A person settles it with `resolve`.
 *
 * @example
 * if (call.status === 'executing' && call.doubt) show(`Outcome unknown since ${new Date(call.doubt.at)}: ${call.doubt.message}`);
 */
export interface Doubt {
  readonly at: number;
  readonly message: string;
}

/**
 * Whose word a call was committed on when its run's own answer was lost: the system it called
 * (`downstream`: `reconcile` found the effect by its key), or a person who checked (`person`, with
 * who they are and what they noted).
 *
 * @example
 * const evidence: Evidence = { source: 'person', by: 'ops_1', at: Date.now(), note: 'charge ch_42 in the dashboard' };
 */
export interface Evidence {
  readonly source: 'downstream' | 'person';
  /** The principal who settled it (a person's `resolve`). */
  readonly by?: string;
  readonly note?: string;
  readonly at: number;
}

/**
 * A committed call's compensation: the call that undoes it (`${id}:compensate`), who asked and
 * why, where it stands, and what `compensate` returned once it committed.
 *
 * @example
 * if (call.compensation?.status === 'committed') show(`Refunded: ${JSON.stringify(call.compensation.output)}`);
 */
export interface CompensationLink {
  readonly id: string;
  readonly by: string;
  readonly reason?: string;
  readonly status: ToolCallStatus;
  readonly output?: unknown;
  /** Why it did not commit, once it ended otherwise. */
  readonly failure?: Reason;
}

/**
 * Where the people deciding a call stand: how many distinct approvers it needs, who has approved
 * (each of them the hash of the input they approved, and where, when a channel passed the vote on:
 * `via`, its name and its own id of the person), how many are left, and the budget that sent it to
 * a person, when one did. On a tool with `approvers`, also who is asked (the only principals
 * who may decide it) and who asks.
 *
 * @example
 * if (call.approval && call.approval.left > 0) show(`${call.approval.left} more approval(s) needed`);
 * if (call.approval?.asked) show(`Waiting for ${call.approval.asked.join(', ')}`);
 */
export interface ApprovalState {
  readonly required: number;
  readonly approvedBy: readonly {
    readonly principal: string;
    readonly at: number;
    readonly via?: { readonly channel: string; readonly user?: string };
  }[];
  readonly left: number;
  readonly overBudget?: { readonly budget: string; readonly message: string };
  /** The principals the tool's `approvers` named for this call: the only ones who may decide it. */
  readonly asked?: readonly string[];
  /** Who asks: the principal who proposed the call and the person it acts for (neither may approve it, by default). */
  readonly from?: { readonly principal: string; readonly onBehalfOf?: string };
  /** When the next escalation asks more principals (its tool's `escalate`), while the call waits. */
  readonly escalatesAt?: number;
  /** When the call ends `cancelled` / `approval_expired` if nobody decides (its tool's `approvalTtlMs`). */
  readonly expiresAt?: number;
}

/**
 * A person's edit of a call's input before approving it: the input the model proposed (the
 * record's `input` is the one that ran), who changed it, and each value that changed.
 *
 * @example
 * call.edit?.changes.map((change) => `${change.path}: ${JSON.stringify(change.from)} → ${JSON.stringify(change.to)}`);
 */
export interface InputEdit {
  readonly proposed: unknown;
  readonly by: string;
  readonly at: number;
  readonly changes: readonly InputChange[];
}

/**
 * One value a person changed: its JSON Pointer path, the value before (absent when added) and after
 * (absent when removed).
 *
 * @example
 * const change: InputChange = { path: '/amount_cents', from: 250000, to: 200000 };
 */
export interface InputChange {
  readonly path: string;
  readonly from?: unknown;
  readonly to?: unknown;
}

/**
 * A call whose arguments are still arriving or have not been checked. `preview` is the best
 * reading of the arguments so far while a stream is open; it is never passed to a tool.
 *
 * @example
 * if (call.status === 'pending') showDraft(call.preview);
 */
export interface PendingCall extends RecordBase {
  readonly status: 'pending';
  readonly input: undefined;
  readonly output: undefined;
  readonly reason: undefined;
  readonly preview: unknown;
}

/**
 * A call with valid arguments that is waiting for a person, about to run, or running.
 *
 * @example
 * if (call.status === 'awaiting_approval') ask(`Charge ${call.input.amount_cents}?`);
 */
export interface ActiveCall<I> extends RecordBase {
  readonly status: 'validated' | 'awaiting_approval' | 'executing';
  readonly input: I;
  readonly output: undefined;
  readonly reason: undefined;
  readonly preview: undefined;
}

/**
 * A call whose verified output has been committed to the app's store.
 *
 * @example
 * if (call.status === 'committed') showReceipt(call.output);
 */
export interface CommittedCall<I, O> extends RecordBase {
  readonly status: 'committed';
  readonly input: I;
  readonly output: O;
  readonly reason: undefined;
  readonly preview: undefined;
}

/**
 * A proposal refused before anything ran. `input` is present when the arguments were valid.
 *
 * @example
 * if (call.status === 'rejected') call.reason.issues?.forEach((issue) => mark(issue.path));
 */
export interface RejectedCall<I> extends RecordBase {
  readonly status: 'rejected';
  readonly input: I | undefined;
  readonly output: undefined;
  readonly reason: Reason<RejectedCode>;
  readonly preview: undefined;
}

/**
 * A call stopped by the tool, a person, or a timeout. Nothing was committed.
 *
 * @example
 * if (call.status === 'cancelled' && call.reason.code === 'approval_denied') say('You said no.');
 */
export interface CancelledCall<I> extends RecordBase {
  readonly status: 'cancelled';
  readonly input: I | undefined;
  readonly output: undefined;
  readonly reason: Reason<CancelledCode>;
  readonly preview: undefined;
}

/**
 * A call that ran and failed (the tool threw, its output was invalid, or commit threw).
 *
 * @example
 * if (call.status === 'failed') report(call.reason.message);
 */
export interface FailedCall<I> extends RecordBase {
  readonly status: 'failed';
  readonly input: I;
  readonly output: undefined;
  readonly reason: Reason<FailedCode>;
  readonly preview: undefined;
}

/**
 * A snapshot of one call. Narrow it by `status`: `output` is set only when `committed`,
 * `reason` only when `rejected`, `cancelled` or `failed`. Every record has every key (unset ones
 * are `undefined`), so that all records share one shape and stay cheap to create.
 *
 * @example
 * function describe(call: ToolCallRecord): string {
 *   if (call.status === 'committed') return `done: ${JSON.stringify(call.output)}`;
 *   if (call.status === 'rejected') return `refused: ${call.reason.code}`;
 *   return call.status;
 * }
 */
export type ToolCallRecord<I = unknown, O = unknown> =
  PendingCall | ActiveCall<I> | CommittedCall<I, O> | RejectedCall<I> | CancelledCall<I> | FailedCall<I>;

/**
 * A record that has reached a terminal status.
 *
 * @example
 * const settled = (call: ToolCallRecord): call is SettledCall => isTerminal(call.status);
 */
export type SettledCall<I = unknown, O = unknown> =
  CommittedCall<I, O> | RejectedCall<I> | CancelledCall<I> | FailedCall<I>;

const TERMINAL: ReadonlySet<ToolCallStatus> = new Set(['committed', 'cancelled', 'rejected', 'failed']);

/**
 * Whether a status is terminal (the call will never move again).
 *
 * @example
 * isTerminal('executing'); // false
 * isTerminal('failed');    // true
 */
export function isTerminal(status: ToolCallStatus): status is TerminalStatus {
  return TERMINAL.has(status);
}
