import {
  isTerminal,
  type InputOf,
  type OutputOf,
  type ToolCallRecord,
  type ToolDefinition,
} from '@toolgate/core';
import { toolJsonSchema } from '@toolgate/core/kit';
import { jsonSchema, type JSONSchema7, type Tool, type UIMessage } from 'ai';
import type { ChatState } from './chat-state.ts';
import type { ToolgateDataTypes } from './data-part.ts';
import { ToolCallOutcomeError } from './outcome-error.ts';

/**
 * The AI SDK `ToolSet` toolgate builds from a server gate's tools: one entry per tool, keyed by its
 * name, typed with its input and output, so `InferUITools<typeof chat.tools>` types each tool part.
 *
 * @example
 * type ChatTools = InferUITools<ToolgateToolSet<typeof serverGate.tools>>;
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
export type ToolgateToolSet<Tools extends readonly ToolDefinition<any, any, any>[]> = {
  [D in Tools[number] as D['name']]: Tool<InputOf<D>, OutputOf<D>>;
};

/**
 * The UI message of a chat over a server gate: each tool part typed from the gate's tools, and
 * toolgate's `data-toolgate` parts. The page types `useChat` with it.
 *
 * @example
 * export type ChatMessage = ToolgateUIMessage<typeof serverGate>;
 * const { messages } = useChat<ChatMessage>();
 */
export type ToolgateUIMessage<
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own input and output
  Gate extends { readonly tools: readonly ToolDefinition<any, any, any>[] },
  Metadata = unknown,
> = UIMessage<
  Metadata,
  ToolgateDataTypes,
  // What InferUITools<ToolgateToolSet<…>> gives, written out: a generic ToolSet cannot be checked against InferUITools' constraint.
  { [D in Gate['tools'][number] as D['name']]: { input: InputOf<D>; output: OutputOf<D> } }
>;

/**
 * Builds the tools. The SDK gets each tool's JSON Schema to describe it to the model but no
 * validator: the ledger validates, so a bad value is a `rejected` record with its paths rather
 * than an SDK error the ledger never saw.
 */
export function buildToolSet(state: ChatState): Record<string, Tool> {
  return Object.fromEntries(
    state.gate.tools.map((definition): [string, Tool] => {
      const tool: Tool<unknown, unknown> = {
        inputSchema: jsonSchema(toolJsonSchema(definition, 'toolgateChat') as JSONSchema7),
        needsApproval: (input, options) => needsApproval(state, definition.name, options.toolCallId, input),
        execute: (_input, options) => outcome(state, options.toolCallId, options.abortSignal),
      };
      if (definition.description !== undefined) tool.description = definition.description;
      return [definition.name, tool];
    }),
  );
}

/**
 * Proposes the call to the ledger and answers whether a person must approve it. A call that
 * `chat.messages()` found approved in the ledger is asked about again by the SDK before it asks
 * `execute` for the result: yes, a person approved it.
 */
async function needsApproval(state: ChatState, name: string, id: string, input: unknown): Promise<boolean> {
  if (state.approved.has(id)) return true;
  const record = await state.gate.propose(
    { type: 'tool-call', toolCallId: id, toolName: name, input },
    { session: state.session, principal: state.principal },
  );
  state.known.set(id, record);
  state.emit(record);
  return record.status === 'awaiting_approval';
}

/** The ledger's outcome of the call: its output once committed; otherwise what the model is told. */
async function outcome(state: ChatState, id: string, signal: AbortSignal | undefined): Promise<unknown> {
  let record: ToolCallRecord | undefined = state.known.get(id);
  if (record === undefined || !isTerminal(record.status)) {
    record = (await state.view.settled(id, signal)) ?? record;
    if (record !== undefined) state.known.set(id, record);
  }
  if (record === undefined)
    throw new Error(`toolgateChat: the ledger has no call "${id}" in this conversation; nothing was run.`);
  state.emit(record);
  if (record.status === 'committed') return record.output;
  throw new ToolCallOutcomeError(record);
}
