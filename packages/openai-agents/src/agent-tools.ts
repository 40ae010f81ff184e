import { isTerminal, type SettledCall, type ToolCallRecord, type ToolDefinition } from '@toolgate/core';
import { outcomeText, shownInputHash, toolJsonSchema } from '@toolgate/core/kit';
import type { ServerGate } from '@toolgate/server';
import { tool, type Agent, type FunctionTool, type RunState, type RunToolApprovalItem } from '@openai/agents';

/** A RunState of any agent (the tools work with whichever agent they are given to). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any agent, any output
type AnyRunState = RunState<unknown, Agent<any, any>>;

/** The JSON Schema object the Agents SDK takes for a non-strict tool (its own type is not exported). */
type NonStrictParameters = {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties: true;
};

/**
 * What {@link toolgateAgents} takes: the conversation, the authenticated user the agent acts for,
 * and how long `execute` waits for a call the ledger is running.
 *
 * @example
 * const options: ToolgateAgentsOptions = { session: conversation.id, principal: user.id };
 */
export interface ToolgateAgentsOptions {
  /** The conversation; its first call's principal owns it. */
  readonly session: string;
  /** The authenticated user, from your session or token. */
  readonly principal: string;
  /**
   * How long a tool's `execute` waits for the end of a call that is running (here or on another
   * instance) before it tells the model the call has not finished yet (default 60 s). A call that
   * waits for a person is never waited on: it is approved, or it stays an interruption.
   */
  readonly waitMs?: number;
}

/**
 * What `resume` did to a RunState: the interruptions it approved and rejected as the ledger
 * decided them, and those the ledger still has waiting for a person.
 *
 * @example
 * const { waiting } = await gated.resume(state);
 * if (waiting.length > 0) await save(state.toString());
 */
export interface Resumed {
  readonly approved: readonly string[];
  readonly rejected: readonly string[];
  readonly waiting: readonly string[];
}

/**
 * The Agents SDK's view of a server gate for one conversation.
 *
 * @example
 * const gated: ToolgateAgents = toolgateAgents(serverGate, { session, principal });
 */
export interface ToolgateAgents {
  /**
   * One Agents function tool per gate tool. `needsApproval` proposes the call to the ledger and
   * answers whether it waits for a person (a call the ledger refuses — a value of the wrong type,
   * say — is never put to one); `execute` answers what the ledger ran, and runs a call the SDK's own
   * `state.approve()` approved through the ledger, bound to the input the RunState holds.
   */
  readonly tools: FunctionTool[];
  /**
   * Carries the ledger's decisions into a RunState before `run(agent, state)`: an interruption whose
   * call was approved (in toolgate's handler, on any instance) is approved; one denied, expired or
   * refused is rejected with the ledger's reason; one still waiting stays.
   */
  readonly resume: (state: AnyRunState) => Promise<Resumed>;
}

/**
 * Puts a server gate under an OpenAI Agents JS agent: its tools' approvals and runs are the
 * ledger's, so a RunState resumed twice runs nothing twice, an approval is bound to the input the
 * RunState holds, and a call nobody decides expires (`approvalTtlMs`) instead of waiting for ever.
 *
 * @example
 * const gated = toolgateAgents(serverGate, { session: chat.id, principal: user.id });
 * const agent = new Agent({ name: 'Assistant', tools: gated.tools });
 * let result = await run(agent, 'Pay Bob $12.50');
 * // later, after the person answered (in your page, or with toolgate's handler):
 * const state = await RunState.fromString(agent, saved);
 * await gated.resume(state);
 * result = await run(agent, state);
 */
export function toolgateAgents(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  serverGate: ServerGate<readonly ToolDefinition<any, any, any>[]>,
  options: ToolgateAgentsOptions,
): ToolgateAgents {
  const { session, principal } = checked(options);
  const waitMs = options.waitMs ?? 60_000;

  async function find(id: string): Promise<ToolCallRecord | undefined> {
    return (await serverGate.calls(session, principal)).find((call) => call.id === id);
  }

  async function propose(name: string, id: string, input: unknown): Promise<ToolCallRecord> {
    return (await find(id)) ?? serverGate.propose({ id, name, arguments: input }, { session, principal });
  }

  async function outcome(definition: ToolDefinition, id: string, input: unknown): Promise<string> {
    const { name } = definition;
    let record = await propose(name, id, input);
    if (record.status === 'awaiting_approval') {
      // The SDK runs a call only once it was approved: here by the app's own `state.approve()`.
      const decision = await serverGate.approve(id, {
        principal,
        inputHash: await shownInputHash(definition, input),
      });
      if (!decision.ok)
        return `The call to "${name}" was not run: its approval was refused (${decision.code}): ${decision.message}.`;
      record = (await find(id)) ?? record;
    }
    if (!isTerminal(record.status)) record = (await ended(id)) ?? record;
    if (!isTerminal(record.status))
      return `The call to "${name}" is still running; its result is not known yet. Do not call it again.`;
    return outcomeText(record as SettledCall);
  }

  async function ended(id: string): Promise<SettledCall | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), waitMs);
    });
    try {
      return await Promise.race([serverGate.settled(id, { principal }), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  const tools = serverGate.tools.map((definition) =>
    tool({
      name: definition.name,
      description: definition.description ?? '',
      parameters: toolJsonSchema(definition, 'toolgateAgents') as unknown as NonStrictParameters,
      // The ledger validates every value; the SDK only parses the JSON.
      strict: false,
      needsApproval: async (_context, input, callId) => {
        if (callId === undefined) return true;
        const record = await propose(definition.name, callId, input);
        return record.status === 'awaiting_approval';
      },
      execute: async (input, _context, details) => {
        const id = details?.toolCall?.callId;
        if (id === undefined) return `The call to "${definition.name}" has no call id; nothing was run.`;
        return outcome(definition, id, input);
      },
    }),
  ) as unknown as FunctionTool[];

  async function resume(state: AnyRunState): Promise<Resumed> {
    const calls = new Map((await serverGate.calls(session, principal)).map((call) => [call.id, call]));
    const approved: string[] = [];
    const rejected: string[] = [];
    const waiting: string[] = [];
    for (const item of state.getInterruptions()) {
      const id = callIdOf(item);
      const record = id === undefined ? undefined : calls.get(id);
      if (id === undefined || record === undefined) continue;
      if (record.status === 'awaiting_approval') waiting.push(id);
      else if (record.history.some((step) => step.status === 'executing')) {
        state.approve(item);
        approved.push(id);
      } else {
        state.reject(item, {
          message: isTerminal(record.status)
            ? outcomeText(record as SettledCall)
            : `The call to "${record.name}" was not run.`,
        });
        rejected.push(id);
      }
    }
    return { approved, rejected, waiting };
  }

  return { tools, resume };
}

function callIdOf(item: RunToolApprovalItem): string | undefined {
  const raw = item.rawItem as { callId?: unknown };
  return typeof raw.callId === 'string' && raw.callId !== '' ? raw.callId : undefined;
}

function checked(options: ToolgateAgentsOptions): ToolgateAgentsOptions {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('toolgateAgents: pass { session, principal }.');
  if (typeof options.session !== 'string' || options.session === '')
    throw new TypeError('toolgateAgents: `session` must be a non-empty string (the conversation id).');
  if (typeof options.principal !== 'string' || options.principal === '') {
    throw new TypeError(
      'toolgateAgents: `principal` must be a non-empty string (the authenticated user the agent acts for).',
    );
  }
  if (options.waitMs !== undefined && !(Number.isFinite(options.waitMs) && options.waitMs > 0))
    throw new TypeError('toolgateAgents: `waitMs` must be a positive number of milliseconds.');
  return options;
}
