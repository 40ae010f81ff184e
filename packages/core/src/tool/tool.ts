import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ToolSchema } from '../schema/tool-schema.ts';
import type { ToolCallRecord } from '../call/record.ts';
import type { RepairKind } from '../proposal/repair.ts';
import { textOf } from '../call/text.ts';

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
   * Stable for the call across every run of it: on the server gate, a tool declared `idempotent`
   * that is re-run after a crash gets the same key, so a payment provider can refuse the second
   * charge. Pass it wherever the effect takes an idempotency key.
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
  if (config.approvals !== undefined && config.approvals > 1 && config.needsApproval === undefined)
    return Object.freeze({ ...config, needsApproval: true });
  return Object.freeze({ ...config });
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
