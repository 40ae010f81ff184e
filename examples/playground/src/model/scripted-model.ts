import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ScriptedTurn } from './chat-chunks.ts';
import { INTENTS } from './intents.ts';
import { readRequest } from './request-reading.ts';
import { SCENARIOS, type ConversationView, type ToolReply } from './scenarios.ts';

const REASON_CODE =
  /\b(invalid_json|invalid_shape|unknown_tool|tool_unavailable|invalid_arguments|too_large|too_deep|unauthorized|truncated|tool_cancelled|user_cancelled|approval_denied|timeout|approval_expired|tool_error|output_invalid|commit_error|interrupted|id_conflict|budget_exceeded)\b/;

/** How the shop's state is stated in the system message, for a model to compute amounts from. */
const CART_TOTAL = /cart total (\d+) cents/;

/** Words that pick a scenario when no value is needed to act on them. */
const SCENARIO_WORDS: readonly (readonly [RegExp, string])[] = [
  [/\b(flood|stock the cart)\b/i, 'flood'],
  [/\b(refund)/i, 'unknown-tool'],
];

/**
 * The offline model. Like a real server it is stateless: it reads the whole request (the
 * visitor's last message, the shop as the system message states it, and the tool messages that
 * answer its own previous calls) and writes the next assistant turn. A scenario's prompt plays
 * that scenario; other text is read for what it asks and the values it names ("send 20 dollars to
 * alice@example.com", "add two mugs"), and anything else gets an explanation of what this model can do.
 */
export function scriptedTurn(messages: readonly ChatCompletionMessageParam[]): ScriptedTurn {
  const lastUser = findLastIndex(messages, (message) => message.role === 'user');
  const said = lastUser === -1 ? '' : textOf(messages[lastUser]?.content);
  const system = messages.find((message) => message.role === 'system');
  const total = CART_TOTAL.exec(system === undefined ? '' : textOf(system.content))?.[1];
  const after = messages.slice(lastUser + 1);
  const view = (prefix: string): ConversationView => ({
    step: after.filter((message) => message.role === 'assistant').length,
    replies: repliesTo(after),
    callId: (index) =>
      `call_${messages.length.toString(36)}${index.toString(36).padStart(2, '0')}${prefix.slice(0, 2)}`,
    cartTotalCents: total === undefined ? undefined : Number(total),
  });
  const named = SCENARIO_WORDS.find(([pattern]) => pattern.test(said))?.[1];
  const scenario =
    SCENARIOS.find((candidate) => candidate.prompt === said) ??
    SCENARIOS.find((candidate) => candidate.id === named);
  if (scenario !== undefined) return scenario.script(view(scenario.id));
  const intent = INTENTS.find((candidate) => candidate.pattern.test(said));
  if (intent !== undefined) return intent.script(view(intent.id), readRequest(said));
  return {
    content:
      'I\'m the offline scripted model: pick a scenario, or ask me to send money ("send $20 to alice@example.com"), add to the cart ("add two mugs"), show a product, check out, apply a coupon, find a delivery slot or track an order. Switch to Your model to talk freely.',
  };
}

/** The tool messages after the last assistant turn, each paired with the name of the call it answers. */
function repliesTo(after: readonly ChatCompletionMessageParam[]): ToolReply[] {
  const lastAssistant = findLastIndex(after, (message) => message.role === 'assistant');
  if (lastAssistant === -1) return [];
  const assistant = after[lastAssistant];
  const names = new Map<string, string>();
  if (assistant?.role === 'assistant') {
    for (const toolCall of assistant.tool_calls ?? []) {
      if (toolCall.type === 'function') names.set(toolCall.id, toolCall.function.name);
    }
  }
  return after.slice(lastAssistant + 1).flatMap((message) => {
    if (message.role !== 'tool') return [];
    const content = textOf(message.content);
    // A committed call answers with its output as JSON; anything else names its reason code.
    const code = isJson(content) ? undefined : REASON_CODE.exec(content)?.[1];
    return [{ name: names.get(message.tool_call_id) ?? '', content, code }];
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : '',
      )
      .join('');
  }
  return '';
}

function findLastIndex<T>(list: readonly T[], test: (item: T) => boolean): number {
  for (let index = list.length - 1; index >= 0; index--) if (test(list[index] as T)) return index;
  return -1;
}
