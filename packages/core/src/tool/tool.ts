import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ToolSchema } from '../schema/tool-schema.ts';
import type { ToolCallRecord } from '../record/record.ts';
import type { RepairKind } from '../proposal/repair.ts';
import { textOf } from '../record/text.ts';

export type { JsonSchemaObject, ToolSchema } from '../schema/tool-schema.ts';

/**
 * The value a schema accepts, after any transforms a Standard Schema applies.
 *
 * @example
 * type Input = InferSchema<typeof schema>; // { q: string }
 */
export type InferSchema<S> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<S>
  : S extends JSONSchema
    ? FromSchema<S>
    : unknown;

const CANCEL = Symbol.for('toolgate.cancel');

/**
 * What a tool returns to cancel its own action; see {@link cancel}.
 *
 * @example
 * const stop: Cancel = cancel('the store is closed');
 */
export interface Cancel {
  readonly [CANCEL]: true;
  readonly reason: string;
}

/**
 * What a tool returns to stop its own action (policy said no, the resource is gone). The call
 * becomes `cancelled` with code `tool_cancelled` and nothing is committed. An ordinary output that
 * happens to contain `cancelled: true` is not a cancellation and commits as usual.
 *
 * @example
 * execute: ({ city }) => (city === 'restricted' ? cancel('location blocked by app policy') : lookUp(city))
 */
export function cancel(reason = 'The tool cancelled this action.'): Cancel {
  // A reason is text the model reads, whatever JavaScript caller passed something else.
  return { [CANCEL]: true, reason: textOf(reason) };
}

/**
 * Whether a value is a {@link cancel} result.
 *
 * @example
 * isCancel(cancel('no')); // true
 * isCancel({ cancelled: true }); // false
 */
export function isCancel(value: unknown): value is Cancel {
  return typeof value === 'object' && value !== null && (value as Partial<Cancel>)[CANCEL] === true;
}

/**
 * What a tool's `execute` receives beside its input.
 *
 * @example
 * execute: async (input, { signal, call }: ToolContext) => fetch(`/api/${call.name}`, { method: 'POST', body: JSON.stringify(input), signal })
 */
export interface ToolContext {
  /** Aborted when the call is cancelled or times out; pass it to `fetch` and friends. */
  readonly signal: AbortSignal;
  readonly call: { readonly id: string; readonly name: string };
  /**
   * The name of the call's effect downstream: the tool's `idempotencyKey(input, call)`, or the call
   * id. The same across every run of the call, on every instance (a re-run after a crash, a run
   * again after `reconcile` found nothing), so a payment provider can refuse a second charge. Pass
   * it wherever the effect takes an idempotency key.
   */
  readonly idempotencyKey: string;
  /**
   * On the server gate, for a tool declared `transactional`: the ledger's open transaction (a
   * Kysely `Transaction`), so that the tool's writes commit together with the call's `committed`
   * record or not at all. `undefined` everywhere else.
   */
  readonly transaction: unknown;
}

/**
 * What `authorize` receives beside the validated input.
 *
 * @example
 * authorize: (input, { state }: AuthorizeContext<Shop>) => input.amount_cents <= state.balance_cents || 'not enough money'
 */
export interface AuthorizeContext<S> {
  readonly call: { readonly id: string; readonly name: string };
  /** The app store's current state, or `undefined` when the gate has no store. */
  readonly state: S;
}

type MaybePromise<T> = T | PromiseLike<T>;

/**
 * What a tool's `reconcile` receives: the call whose outcome nobody saw, the key its effect was
 * named by downstream, and which run of the tool is in doubt.
 *
 * @example
 * reconcile: async ({ idempotencyKey, signal }: ReconcileContext<Order>) => lookUpCharge(idempotencyKey, { signal })
 */
export interface ReconcileContext<I = unknown> {
  readonly input: I;
  readonly call: { readonly id: string; readonly name: string };
  /** The key the tool passed downstream (`ctx.idempotencyKey` of the run in doubt): look the effect up by it. */
  readonly idempotencyKey: string;
  /** Which run of the tool is in doubt: 1 for the first, 2 once it was run again after `not_executed`. */
  readonly attempt: number;
  /** Aborted when the gate stops waiting for the answer (the tool's `timeoutMs`, 30 s if none, or a lost claim). */
  readonly signal: AbortSignal;
}

/**
 * What `reconcile` answers: the effect happened (with the output the tool would have returned),
 * it did not (the call runs again once, with the same key), or nobody can tell.
 *
 * @example
 * const found: Reconciliation<Receipt> = charge ? { outcome: 'committed', output: toReceipt(charge) } : { outcome: 'not_executed' };
 */
export type Reconciliation<O = unknown> =
  | { readonly outcome: 'committed'; readonly output: O }
  | { readonly outcome: 'not_executed' }
  | { readonly outcome: 'unknown' };

/**
 * What a tool's `approvers` receives: the call to be decided (its validated input; for a
 * compensation, the input of the call it undoes), who proposed it, in which session, and the
 * person an agent proposed it for, when it said.
 *
 * @example
 * approvers: ({ input, principal }: ApproversCall<Transfer>) => (input.amount_cents > 100_000 ? ['cfo'] : [managerOf(principal)])
 */
export interface ApproversCall<I = unknown> {
  readonly id: string;
  readonly name: string;
  readonly input: I;
  readonly principal: string;
  readonly session: string;
  readonly onBehalfOf?: string;
}

/**
 * One step of a tool's escalation: after `afterMs` without a decision (counted from when the call
 * began to wait), these principals are asked too; those asked before may still decide. `approvers`
 * is a list, or a function of the call like the tool's own `approvers`.
 *
 * @example
 * escalate: [{ afterMs: 4 * HOUR, approvers: ['on_call_lead'] }, { afterMs: DAY, approvers: ({ principal }) => [directorOf(principal)] }]
 */
export interface Escalation<I = unknown> {
  readonly afterMs: number;
  readonly approvers: readonly string[] | ((call: ApproversCall<I>) => MaybePromise<readonly string[]>);
}

/**
 * A registered tool. Build one with {@link defineTool}. The type parameters default to `any` so
 * that tools with different inputs fit one `tools` list.
 *
 * @example
 * const tools: ToolDefinition[] = [charge, refund];
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see the doc comment: heterogeneous tool lists
export interface ToolDefinition<I = any, O = any, S = any, N extends string = string> {
  /** The tool's name, as its literal type when it was written inline, so a tool list can be keyed by it. */
  readonly name: N;
  readonly description?: string;
  readonly inputSchema: ToolSchema;
  /** Checked against the tool's output before commit; a mismatch fails the call with `output_invalid`. */
  readonly outputSchema?: ToolSchema;
  // Method syntax on purpose: it lets a list of tools with different inputs and outputs (a tool
  // that only ever cancels has output `never`) share one `ToolDefinition<any, any, S>[]` type.
  /**
   * Runs the call. `input` is the validated input itself, the record's, deeply frozen: a tool that
   * wants to change it copies it first (`structuredClone(input)`); a change to it throws in strict
   * mode, and that throw fails the call with a reason that says so.
   */
  execute(input: I, ctx: ToolContext): MaybePromise<O | Cancel>;
  /**
   * Returns the partial next state of the app store, as a plain object; applied in one `setState`,
   * only on success. `output` and `input` are the record's own, frozen.
   */
  commit?(state: S, output: O, input: I): Partial<S>;
  /**
   * Whether a person must approve the call: `true`, or a function of the validated input that may
   * answer a Promise. Only a definite `false` runs the call without asking; a throw, a rejection or
   * any answer but a boolean rejects it with `unauthorized`.
   */
  readonly needsApproval?: boolean | ((input: I) => MaybePromise<boolean>);
  /** `true` allows the call; `false` or a string (the reason) refuses it with `unauthorized`. */
  authorize?(input: I, ctx: AuthorizeContext<S>): MaybePromise<boolean | string>;
  /** Ends an executing call with `cancelled`/`timeout` after this many milliseconds. */
  readonly timeoutMs?: number;
  /** Model defects this tool accepts repaired (each repair is recorded); none by default. */
  readonly repair?: readonly RepairKind[];
  /**
   * Safe to run again: the server gate re-runs it, with the same `ctx.idempotencyKey`, when the
   * process running it died; otherwise such a call ends `failed` / `interrupted`.
   */
  readonly idempotent?: boolean;
  /**
   * Its effects are writes to the ledger's database through `ctx.transaction`; on the server gate
   * they commit with the call's `committed` record or not at all, and a crash re-runs it.
   */
  readonly transactional?: boolean;
  /**
   * On the server gate: how many distinct approvers (each allowed by `canApprove`) must approve the
   * same input before the call runs (default 1); one denial ends it. More than one implies
   * `needsApproval: true` unless `needsApproval` says otherwise. The browser gate has one person and
   * asks once.
   */
  readonly approvals?: number;
  /**
   * On the server gate: the principals asked to decide a call, from the call (may answer a
   * Promise). They are the only ones who may approve or deny it (a `canApprove` given to the gate
   * still applies too); with `approvals: n`, n distinct ones of them. By default (the gate's
   * `selfApproval: 'forbid'`) neither the call's principal nor its `onBehalfOf` may approve it, and
   * they are not asked. A throw, an answer that is not a list of principals, or one that leaves
   * fewer principals than `approvals` rejects the call (`unauthorized`) instead of leaving it to
   * wait for nobody; so does no answer within `timeoutMs` (30 s if unset): it is asked inside the
   * ledger transaction that makes the call wait, so keep it to a quick lookup. A compensation of
   * the tool is asked of it with the input of the call it undoes. Implies `needsApproval: true`
   * unless `needsApproval` says otherwise. Without it, the gate's `canApprove` decides who may
   * approve (by default the session's owner).
   */
  approvers?(call: ApproversCall<I>): MaybePromise<readonly string[]>;
  /**
   * On the server gate: remind the principals still asked, once, after this many milliseconds
   * without a decision (a `reminder` notice through the gate's channels, and an event in the trail).
   */
  readonly remindAfterMs?: number;
  /** On the server gate: who else is asked, and when, while nobody decides (see {@link Escalation}). */
  readonly escalate?: readonly Escalation<I>[];
  /**
   * On the server gate: how long a call waits for a decision before it ends `cancelled` /
   * `approval_expired` (the gate's `approvalTtlMs` otherwise).
   */
  readonly approvalTtlMs?: number;
  /**
   * Names the call's effect downstream, from its validated input (two calls about one order may be
   * one effect: `charge:${input.order_id}`); `ctx.idempotencyKey` is it. Default: the call id. A
   * function that throws or answers anything but a non-empty string rejects the call
   * (`invalid_arguments`) before anything runs.
   */
  idempotencyKey?(input: I, call: { readonly id: string; readonly name: string }): string;
  /**
   * Looks the effect up downstream by its key when nobody saw how a run ended: its process died
   * while it ran (server gate), or it threw an error not marked `notExecuted`. `committed`
   * ends the call committed with that output (checked against `outputSchema`; the tool is not run
   * again); `not_executed` runs it again once, with the same key; `unknown`, a throw, an answer of
   * any other shape, or none within `timeoutMs` (30 s if unset) → `onUnknown`.
   */
  reconcile?(ctx: ReconcileContext<I>): MaybePromise<Reconciliation<O>>;
  /**
   * What happens to a call whose outcome nobody can tell: `'interrupt'` (default) ends it `failed` /
   * `interrupted` ("it may or may not have taken effect"); `'hold'` keeps it `executing` with
   * `doubt` set, never run again by itself, until a person settles it (`serverGate.resolve`).
   */
  readonly onUnknown?: 'interrupt' | 'hold';
  /**
   * Undoes a committed call (a refund for a charge); run by `serverGate.compensate` as a call of
   * its own, `${id}:compensate`, with the same approval rule as the tool. `ctx.idempotencyKey` is
   * the compensation's own key (`${key}:compensate`), stable across its re-runs.
   */
  compensate?(output: O, ctx: ToolContext): MaybePromise<unknown>;
}

/**
 * The input type of a tool.
 *
 * @example
 * type ChargeInput = InputOf<typeof charge>;
 */
export type InputOf<T> = T extends ToolDefinition<infer I, infer _O, infer _S> ? I : never;

/**
 * The output type of a tool (what `execute` resolves to, cancellations aside).
 *
 * @example
 * type ChargeOutput = OutputOf<typeof charge>;
 */
export type OutputOf<T> = T extends ToolDefinition<infer _I, infer O, infer _S> ? O : never;

/**
 * The configuration {@link defineTool} takes; `I` is inferred from `inputSchema`.
 *
 * @example
 * const config: ToolConfig<typeof schema, Receipt, Shop> = { name: 'charge', inputSchema: schema, execute };
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- S is free until a commit or authorize names it
export interface ToolConfig<Schema extends ToolSchema, O, S = any, N extends string = string> {
  readonly name: N;
  readonly description?: string;
  readonly inputSchema: Schema;
  readonly outputSchema?: ToolSchema;
  readonly execute: (input: InferSchema<Schema>, ctx: ToolContext) => MaybePromise<O | Cancel>;
  readonly commit?: (state: S, output: O, input: InferSchema<Schema>) => Partial<S>;
  readonly needsApproval?: boolean | ((input: InferSchema<Schema>) => MaybePromise<boolean>);
  readonly authorize?: (
    input: InferSchema<Schema>,
    ctx: AuthorizeContext<S>,
  ) => MaybePromise<boolean | string>;
  readonly timeoutMs?: number;
  readonly repair?: readonly RepairKind[];
  readonly idempotent?: boolean;
  readonly transactional?: boolean;
  readonly approvals?: number;
  readonly approvers?: (call: ApproversCall<InferSchema<Schema>>) => MaybePromise<readonly string[]>;
  readonly remindAfterMs?: number;
  readonly escalate?: readonly Escalation<InferSchema<Schema>>[];
  readonly approvalTtlMs?: number;
  readonly idempotencyKey?: (
    input: InferSchema<Schema>,
    call: { readonly id: string; readonly name: string },
  ) => string;
  readonly reconcile?: (ctx: ReconcileContext<InferSchema<Schema>>) => MaybePromise<Reconciliation<O>>;
  readonly onUnknown?: 'interrupt' | 'hold';
  readonly compensate?: (output: O, ctx: ToolContext) => MaybePromise<unknown>;
}

/**
 * Defines a tool the gate may run. `execute` and `commit` get the input type inferred from
 * `inputSchema` (a Zod/Valibot schema, or a JSON Schema written inline or `as const`).
 * Throws at once on a definition that cannot work (no name, no execute, no schema).
 *
 * @example
 * const charge = defineTool({
 *   name: 'charge',
 *   inputSchema: {
 *     type: 'object',
 *     properties: { amount_cents: { type: 'integer', minimum: 0 }, currency: { enum: ['USD', 'EUR'] } },
 *     required: ['amount_cents', 'currency'],
 *     additionalProperties: false,
 *   },
 *   execute: async ({ amount_cents }, { signal }) => payments.charge(amount_cents, { signal }),
 *   commit: (state: Shop, receipt) => ({ balance: state.balance - receipt.amount_cents }),
 * });
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- S is free until a commit or authorize names it
export function defineTool<const Schema extends ToolSchema, O, S = any, const N extends string = string>(
  config: ToolConfig<Schema, O, S, N>,
): ToolDefinition<InferSchema<Schema>, O, S, N> {
  const where =
    typeof config.name === 'string' && config.name !== '' ? `defineTool("${config.name}")` : 'defineTool';
  if (typeof config.name !== 'string' || config.name === '') {
    throw new TypeError(`${where}: \`name\` must be a non-empty string.`);
  }
  if (typeof config.execute !== 'function') {
    throw new TypeError(`${where}: \`execute\` must be a function.`);
  }
  if (typeof config.inputSchema !== 'object' || config.inputSchema === null) {
    throw new TypeError(
      `${where}: \`inputSchema\` must be a Standard Schema (Zod, Valibot) or a JSON Schema object.`,
    );
  }
  if (config.commit !== undefined && typeof config.commit !== 'function') {
    throw new TypeError(`${where}: \`commit\` must be a function that returns the partial next state.`);
  }
  if (config.timeoutMs !== undefined && !(Number.isFinite(config.timeoutMs) && config.timeoutMs > 0)) {
    throw new TypeError(`${where}: \`timeoutMs\` must be a positive number of milliseconds.`);
  }
  if (config.approvals !== undefined && !(Number.isInteger(config.approvals) && config.approvals >= 1)) {
    throw new TypeError(
      `${where}: \`approvals\` must be a whole number of approvers, 1 or more (got ${String(config.approvals)}).`,
    );
  }
  if (config.approvers !== undefined && typeof config.approvers !== 'function')
    throw new TypeError(
      `${where}: \`approvers\` must be a function of the call that answers the principals asked to decide it, e.g. \`approvers: () => ['manager_1']\` (got ${textOf(config.approvers)}).`,
    );
  checkOutcomeOptions(where, config);
  const asks = (config.approvals !== undefined && config.approvals > 1) || config.approvers !== undefined;
  if (asks && config.needsApproval === undefined) return Object.freeze({ ...config, needsApproval: true });
  return Object.freeze({ ...config });
}

/** The options about outcomes nobody saw: each a function, and `onUnknown` one of its two words. */
function checkOutcomeOptions(
  where: string,
  config: {
    readonly idempotencyKey?: unknown;
    readonly reconcile?: unknown;
    readonly compensate?: unknown;
    readonly onUnknown?: unknown;
    readonly transactional?: boolean;
  },
): void {
  for (const name of ['idempotencyKey', 'reconcile', 'compensate'] as const) {
    if (config[name] !== undefined && typeof config[name] !== 'function')
      throw new TypeError(`${where}: \`${name}\` must be a function.`);
  }
  if (config.onUnknown !== undefined && config.onUnknown !== 'interrupt' && config.onUnknown !== 'hold')
    throw new TypeError(
      `${where}: \`onUnknown\` must be 'interrupt' or 'hold' (got ${textOf(config.onUnknown)}).`,
    );
  if (config.transactional === true && (config.reconcile !== undefined || config.onUnknown !== undefined))
    throw new TypeError(
      `${where}: a transactional tool's writes commit with its call or not at all, so its outcome is never in doubt; drop \`reconcile\` and \`onUnknown\`.`,
    );
}

/**
 * Whether a record is a call of this tool, narrowing it to the tool's input and output types.
 *
 * @example
 * if (isCallOf(charge, call) && call.status === 'committed') console.log(call.output.receipt);
 */
export function isCallOf<T extends ToolDefinition>(
  tool: T,
  call: ToolCallRecord | undefined,
): call is ToolCallRecord<InputOf<T>, OutputOf<T>> {
  return call !== undefined && call.name === tool.name;
}
