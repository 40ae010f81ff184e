import type { StoreApi } from 'zustand/vanilla';
import { systemClock, type Clock } from '../call/clock.ts';
import { auditEvent, createAuditLog, type AuditLog, type AuditWriter } from './audit.ts';
import type { CallRequest } from './call-request.ts';
import { resolveLimits, type Limits, type LimitsOption } from '../proposal/limits.ts';
import { createCallStore, type ReadonlyStore, type ToolCallsState } from './call-store.ts';
import { createDelivery } from './listeners.ts';
import { createPending, transition, type CallEvent } from '../call/machine.ts';
import { createPipeline, type CallKeeper, type MoveNote } from '../call/pipeline.ts';
import { truncatedReason } from '../call/steps/validation.ts';
import { readProposal } from '../proposal/proposal.ts';
import { createToolRegistry, type ToolProblem } from '../tool/registry.ts';
import { isTerminal, type ProposalSource, type Repair, type SettledCall, type ToolCallRecord } from '../call/record.ts';
import type { JsonSchemaCompiler } from '../schema/schema.ts';
import { messageOf, textOf } from '../call/text.ts';
import type { ToolDefinition } from '../tool/tool.ts';
import { toolResult, type ToolResultFormat, type ToolResultFormats } from '../reply/tool-result.ts';
import { refusal, type ProposeOptions, type StreamGate } from './stream-gate.ts';
import { stoppedCall } from './stopped.ts';

export type { ReadonlyStore, ToolCallsState } from './call-store.ts';

/**
 * What {@link createToolGate} takes.
 *
 * @example
 * const options: ToolGateOptions<Shop> = { tools: [charge], store: shopStore, retain: { settled: 500 } };
 */
export interface ToolGateOptions<S> {
  /** The tools the model may call. Names must be unique. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  readonly tools: readonly ToolDefinition<any, any, NoInfer<S>>[];
  /** The app's Zustand store; written only by a tool's `commit`, only on the way into `committed`. */
  readonly store?: StoreApi<S>;
  readonly limits?: LimitsOption;
  /** Compiles JSON Schemas (default: Ajv from `@toolgate/core`, @cfworker/json-schema from `@toolgate/core/csp`). */
  readonly jsonSchema?: JsonSchemaCompiler;
  readonly clock?: Clock;
  /**
   * Keep at most this many settled calls in `calls`; older ones are dropped (their audit events
   * stay, and their ids are remembered so they are never run again).
   */
  readonly retain?: { readonly settled: number };
  /** Keep at most this many audit events (default: all). */
  readonly audit?: { readonly limit?: number };
  /** Makes ids for calls that arrive without one (default: `tg_1`, `tg_2`, …). */
  readonly generateId?: () => string;
  /** Receives errors thrown by listeners, so that they never break a call (default: `console.error`). */
  readonly onError?: (error: unknown) => void;
}

/**
 * The gate: every tool call goes through it, from proposal to a verified commit or a reason.
 *
 * @example
 * const gate: ToolGate = createToolGate({ tools: [charge], store });
 * const call = await gate.run(toolCall);
 */
export interface ToolGate extends StreamGate {
  /** `propose`, then `settled`. */
  readonly run: (input: unknown, options?: ProposeOptions) => Promise<SettledCall>;
  /** Runs a call that awaits approval. `false`, and nothing moves, when there is no such call. */
  readonly approve: (id: string) => boolean;
  /** Cancels a call that awaits approval with `approval_denied`; the reason is recorded as text, whatever it is. */
  readonly deny: (id: string, reason?: string) => boolean;
  /** The call records, as a read-only Zustand store. */
  readonly calls: ReadonlyStore<ToolCallsState>;
  /**
   * Calls `listener` after each update that moves the call with this id (it need not exist yet).
   * Costs nothing per update for other calls, so a transcript of many calls can follow each one.
   * Returns the unsubscribe function.
   */
  readonly subscribeCall: (id: string, listener: () => void) => () => void;
  /**
   * The request about this call that is on its way or was refused, for a gate that sends
   * approvals to someone else to decide (a remote gate); changes are told through `subscribeCall`.
   * A gate that decides on the spot has no such requests and leaves this out.
   */
  readonly requestOf?: (id: string) => CallRequest | undefined;
  /** What to send back to the model for one settled call, in a provider's format. */
  readonly toolResult: <F extends ToolResultFormat>(id: string, format: F) => ToolResultFormats[F];
  readonly audit: AuditLog;
  /**
   * Compiles every tool's schemas now (otherwise each tool's are compiled on its first call) and
   * lists each tool that cannot be used because a schema of it does not compile; empty when all
   * compile. It never throws: call it at start-up or in a test, and fail there if it lists anything.
   * A call of such a tool is rejected with `tool_unavailable` whether or not `check` was called.
   */
  readonly check: () => readonly ToolProblem[];

}

/** What a call has while it is open that is not part of its record; dropped when it settles. */
interface Open {
  waiters?: ((call: SettledCall) => void)[];
  detach?: () => void;
}

/**
 * Builds `createToolGate` around a default JSON Schema compiler, so that each entry point
 * (`@toolgate/core`, `@toolgate/core/csp`) bundles only its own validator.
 *
 * @example
 * export const createToolGate = createToolGateWith(ajvJsonSchema);
 */
export function createToolGateWith(defaultCompiler: JsonSchemaCompiler) {
  return function createToolGate<S = unknown>(options: ToolGateOptions<S>): ToolGate {
    return buildGate(options, options.jsonSchema ?? defaultCompiler);
  };
}

function buildGate<S>(options: ToolGateOptions<S>, compileJson: JsonSchemaCompiler): ToolGate {
  const limits: Limits = resolveLimits(options.limits);
  const clock = options.clock ?? systemClock;
  const store = options.store;
  const report = options.onError ?? ((error: unknown) => console.error(error));
  const onError = (error: unknown): void => {
    try {
      report(error);
    } catch {
      // The app's own error handler threw: there is nowhere left to report to, and the call goes on.
    }
  };
  // One order for every listener of this gate, so that each hears events in the order they happened.
  const delivery = createDelivery();
  const audit: AuditWriter = createAuditLog(options.audit?.limit ?? Infinity, onError, delivery);
  const retain = options.retain?.settled ?? Infinity;
  let idCounter = 0;
  const generateId = options.generateId ?? (() => `tg_${++idCounter}`);

  const registry = createToolRegistry(options.tools, compileJson, 'createToolGate');
  for (const tool of options.tools) {
    if (tool.commit && !store) {
      throw new Error(`createToolGate: tool "${tool.name}" has a commit but the gate has no store; pass your Zustand store as \`store\`.`);
    }
  }
  const { entry } = registry;

  const records = new Map<string, ToolCallRecord>();
  const evicted = new Map<string, SettledCall>();
  const open = new Map<string, Open>();
  // Settled ids, oldest first (a Set keeps insertion order), for `retain`.
  const settledOrder = new Set<string>();
  const callStore = createCallStore(records, delivery, onError);

  const lookup = (id: string): ToolCallRecord | undefined => records.get(id) ?? evicted.get(id);

  // Transitions made inside one gate operation (a sync tool goes pending → committed within
  // `propose`) reach subscribers as one store update; the audit log still gets every transition.
  let depth = 0;
  let dirty: string[] = [];
  function batch<T>(operation: () => T): T {
    depth++;
    try {
      return operation();
    } finally {
      if (--depth === 0 && dirty.length > 0) flush();
    }
  }
  function touch(id: string): void {
    if (dirty[dirty.length - 1] !== id && !dirty.includes(id)) dirty.push(id);
  }
  function flush(): void {
    if (dirty.length === 0) return;
    const changed = dirty;
    dirty = [];
    callStore.publish(changed);
  }

  function write(next: ToolCallRecord, from: ToolCallRecord | undefined, repairs?: readonly Repair[]): void {
    records.set(next.id, next);
    // The audit trail first: a listener told below may move the call again, and its event comes after this one.
    if (from === undefined || from.status !== next.status) audit.record(auditEvent(next, from, repairs));
    const terminal = isTerminal(next.status);
    if (terminal) evictBeyondRetention(next.id);
    touch(next.id);
    if (depth === 0) flush();
    if (terminal) settle(next as SettledCall);
  }

  function evictBeyondRetention(id: string): void {
    if (retain === Infinity) return;
    settledOrder.add(id);
    for (const oldId of settledOrder) {
      if (settledOrder.size <= retain) break;
      settledOrder.delete(oldId);
      const old = records.get(oldId);
      records.delete(oldId);
      if (old !== undefined) evicted.set(oldId, Object.freeze({ ...old, input: undefined, output: undefined, evicted: true }) as SettledCall);
      touch(oldId);
    }
  }

  function settle(call: SettledCall): void {
    const side = open.get(call.id);
    if (side === undefined) return;
    open.delete(call.id);
    side.detach?.();
    for (const resolve of side.waiters ?? []) resolve(call);
  }

  function openOf(id: string): Open {
    let side = open.get(id);
    if (side === undefined) {
      side = {};
      open.set(id, side);
    }
    return side;
  }

  function move(id: string, event: CallEvent): ToolCallRecord | undefined {
    const current = records.get(id);
    if (current === undefined) return undefined;
    const next = transition(current, event, clock.now());
    if (next === undefined) return undefined;
    write(next, current, event.type === 'validate' ? next.repairs : undefined);
    return next;
  }

  // The calls whose change is being written to the store now. A set, not one id: a store subscriber
  // may approve another call whose sync tool commits inside this write.
  const committing = new Set<string>();

  /**
   * Writes a verified output to the app's store (one `setState`), then moves the call to `committed`;
   * the call is `committed` exactly when its change is in the store.
   */
  function commit(id: string, tool: ToolDefinition, input: unknown, output: unknown): ToolCallRecord | undefined {
    if (tool.commit !== undefined && store !== undefined) {
      let partial: unknown;
      try {
        partial = tool.commit(store.getState(), output, input);
      } catch (error) {
        return fail(id, `commit threw: ${messageOf(error)}`);
      }
      let plain: boolean;
      try {
        plain = isPlainObject(partial);
      } catch (error) {
        return fail(id, `commit must return the partial next state as a plain object; what it returned cannot be read: ${messageOf(error)}`);
      }
      if (!plain) {
        return fail(id, `commit must return the partial next state as a plain object, not ${kindOf(partial)}`);
      }
      // `commit` is app code: it may have cancelled the call itself.
      if (records.get(id)?.status !== 'executing') return undefined;
      // From here the store is written: a cancel of this call is refused until the call is
      // `committed`, so the record can never say `cancelled` about a change the store holds.
      committing.add(id);
      try {
        const before = store.getState();
        try {
          store.setState(partial as Partial<S>);
        } catch (error) {
          // A store's state is a new object after each write (Zustand's is): the same object means
          // the write never happened (a refusing store, a getter on the partial that threw), and the
          // call did not commit. A new one means a subscriber threw after it: that is the app's bug.
          if (store.getState() === before) return fail(id, `the store refused the write: ${messageOf(error)}`);
          onError(error);
        }
        return move(id, { type: 'commit', output });
      } finally {
        committing.delete(id);
      }
    }
    return move(id, { type: 'commit', output });
  }

  const fail = (id: string, message: string) => move(id, { type: 'fail', reason: { code: 'commit_error', message } });

  const keeper: CallKeeper = {
    move,
    open: (call, entry) =>
      records.get(call.id)?.status === 'executing'
        ? { commit: (running, output) => commit(running.id, entry.tool, running.input, output) }
        : undefined,
  };
  const pipeline = createPipeline({
    limits,
    clock,
    onError,
    entry,
    toolNames: () => registry.names,
    keeper,
    state: () => store?.getState(),
  });

  function create(id: string | undefined, name: string, source: ProposalSource, turn: string | undefined): ToolCallRecord {
    let callId = id;
    if (callId === undefined) {
      do callId = generateId();
      while (lookup(callId) !== undefined);
    }
    const record = createPending({ id: callId, name, source, generatedId: id === undefined, turn, at: clock.now() });
    write(record, undefined);
    return record;
  }

  function watch(id: string, signal: AbortSignal | undefined): void {
    if (signal === undefined) return;
    if (signal.aborted) {
      cancelCall(id, 'The caller aborted this call.');
      return;
    }
    const onAbort = () => cancelCall(id, 'The caller aborted this call.');
    signal.addEventListener('abort', onAbort, { once: true });
    openOf(id).detach = () => signal.removeEventListener('abort', onAbort);
  }

  function cancelCall(id: string, message: string): boolean {
    const call = records.get(id);
    if (call === undefined || isTerminal(call.status) || committing.has(id)) return false;
    void pipeline.stop(id, new DOMException(message, 'AbortError'));
    return move(id, { type: 'cancel', reason: { code: 'user_cancelled', message } }) !== undefined;
  }

  function propose(input: unknown, proposeOptions?: ProposeOptions): ToolCallRecord {
    let reading: ReturnType<typeof readProposal>;
    try {
      reading = readProposal(input, limits);
    } catch (error) {
      // Only reachable through hostile objects (a throwing getter): still an answer, never a throw.
      reading = {
        ok: false,
        source: 'normalised',
        reason: { code: 'invalid_shape', message: `the proposal could not be read: ${messageOf(error)}` },
      };
    }
    const id = proposeOptions?.id ?? (reading.ok ? reading.proposal.id : reading.id);
    if (id !== undefined) {
      const known = lookup(id);
      if (known !== undefined) return known;
    }
    if (!reading.ok) {
      const record = create(id, reading.name ?? '', reading.source, proposeOptions?.turn);
      return move(record.id, { type: 'reject', reason: reading.reason }) ?? record;
    }
    const { proposal } = reading;
    const record = create(id, proposal.name, proposal.source, proposeOptions?.turn);
    watch(record.id, proposeOptions?.signal);
    resolve(record.id, proposal.arguments, proposal.truncated === true, proposeOptions?.repairs ?? []);
    return lookup(record.id) ?? record;
  }

  function resolve(id: string, raw: unknown, truncated: boolean, repairs: readonly Repair[]): void {
    const call = records.get(id);
    if (call?.status === 'pending') pipeline.resolve(id, call.name, raw, truncated, repairs, BROWSER);
  }

  function settled(id: string): Promise<SettledCall> {
    const call = lookup(id);
    if (call === undefined) return Promise.reject(new Error(`gate.settled: no call with id "${id}" was proposed to this gate.`));
    if (isTerminal(call.status)) return Promise.resolve(call as SettledCall);
    return new Promise((resolvePromise) => {
      (openOf(id).waiters ??= []).push(resolvePromise);
    });
  }

  const proposeBatched = (input: unknown, proposeOptions?: ProposeOptions) => batch(() => propose(input, proposeOptions));
  return {
    propose: proposeBatched,
    settled,
    stopped: (id) => stoppedCall({ get: lookup, subscribeCall: callStore.subscribeCall, settled }, id),
    run: (input, proposeOptions) => settled(proposeBatched(input, proposeOptions).id),
    get: lookup,
    approve: (id) =>
      batch(() => {
        const call = records.get(id);
        if (call?.status !== 'awaiting_approval' || registry.entry(call.name) === undefined) return false;
        pipeline.execute(id, BROWSER);
        return true;
      }),
    deny: (id, reason) =>
      batch(() => {
        if (records.get(id)?.status !== 'awaiting_approval') return false;
        const message = reason === undefined ? 'a person denied this call' : textOf(reason);
        return move(id, { type: 'cancel', reason: { code: 'approval_denied', message } }) !== undefined;
      }),
    cancel: (id, reason) => batch(() => cancelCall(id, reason === undefined ? 'the user cancelled this call' : textOf(reason))),
    calls: callStore.calls,
    subscribeCall: callStore.subscribeCall,
    toolResult(id, format) {
      const call = lookup(id);
      if (call === undefined) throw new Error(`gate.toolResult: no call with id "${id}" was proposed to this gate.`);
      if (!isTerminal(call.status)) {
        throw new Error(`gate.toolResult: call "${id}" is ${call.status}; answer it once it has settled (await gate.settled(id)).`);
      }
      return toolResult(call as SettledCall, format);
    },
    audit,
    tools: options.tools,
    check: registry.check,
    limits,
    stream: {
      open(init) {
        const known = init.id === undefined ? undefined : lookup(init.id);
        return known ?? batch(() => create(init.id, init.name, init.source, init.turn));
      },
      preview(id, preview) {
        move(id, { type: 'preview', preview });
      },
      close: (id, rawArguments) =>
        batch(() => {
          resolve(id, rawArguments, false, []);
          return lookup(id);
        }),
      truncate: (id, message) =>
        batch(() => {
          move(id, { type: 'reject', reason: truncatedReason(message) });
          return lookup(id);
        }),
      refuse: (id, reason) =>
        batch(() => {
          if (records.get(id)?.status === 'pending') move(id, { type: 'reject', reason: refusal(reason) });
          return lookup(id);
        }),
    },
  };
}

/** Whether `value` is an object literal (or has no prototype), as a partial state must be. */
function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return `a ${typeof value}`;
  try {
    if (Array.isArray(value)) return 'an array';
    const name: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object with a prototype';
  } catch {
    return 'an object that cannot be read';
  }
}

/** The browser gate has one person in front of it; the server gate names each actor. */
const BROWSER: MoveNote = { actor: 'browser' };
