import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ScriptedTurn } from './chat-chunks.ts';
import { SCENARIOS, type ConversationView, type Scenario, type ToolReply } from './scenarios.ts';

const REASON_CODE =
  /\b(invalid_json|invalid_shape|unknown_tool|tool_unavailable|invalid_arguments|too_large|too_deep|unauthorized|truncated|tool_cancelled|user_cancelled|approval_denied|timeout|tool_error|output_invalid|commit_error)\b/;

const KEYWORDS: readonly (readonly [RegExp, Scenario['id']])[] = [
  [/\b(flood|200|stock)\b/i, 'flood'],
  [/\b(refund)/i, 'unknown-tool'],
  [/\b(coupon|discount)/i, 'policy-cancel'],
  [/\b(deliver|courier|slot)/i, 'slow-cancel'],
  [/\b(send|transfer)\b/i, 'transfer'],
  [/\b(where|track)\b/i, 'tool-throws'],
  [/\b(add|socks|cap)\b/i, 'parallel'],
  [/\b(buy|check ?out|pay)\b/i, 'purchase'],
];

/**
 * The offline model. Like a real server it is stateless: it reads the whole request (the
 * visitor's last message and the tool messages that answer its own previous calls) and writes
 * the next assistant turn. A scenario's prompt picks that scenario; other text is matched by
 * keywords, and anything else gets an explanation of what this model can do.
 */
export function scriptedTurn(messages: readonly ChatCompletionMessageParam[]): ScriptedTurn {
  const lastUser = findLastIndex(messages, (message) => message.role === 'user');
  const said = lastUser === -1 ? '' : textOf(messages[lastUser]?.content);
  const scenario = SCENARIOS.find((candidate) => candidate.prompt === said) ?? KEYWORDS.find(([pattern]) => pattern.test(said))?.[1];
  const chosen = typeof scenario === 'string' ? SCENARIOS.find((candidate) => candidate.id === scenario) : scenario;
  if (chosen === undefined) {
    return {
      content:
        "I'm the offline scripted model, so I only know the scenarios in the list: pick one, or ask me to buy, add to the cart, send money, apply a coupon, find a delivery slot or track an order. Connect a real model in Settings to talk freely.",
    };
  }
  const after = messages.slice(lastUser + 1);
  const step = after.filter((message) => message.role === 'assistant').length;
  const view: ConversationView = {
    step,
    replies: repliesTo(after),
    callId: (index) => `call_${messages.length.toString(36)}${index.toString(36).padStart(2, '0')}${chosen.id.slice(0, 2)}`,
  };
  return chosen.script(view);
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
    return content.map((part: unknown) => (typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : '')).join('');
  }
  return '';
}

function findLastIndex<T>(list: readonly T[], test: (item: T) => boolean): number {
  for (let index = list.length - 1; index >= 0; index--) if (test(list[index] as T)) return index;
  return -1;
}
