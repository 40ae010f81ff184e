import { outcomeText, outputText } from '../outcome.ts';
import type { SettledCall } from '../record.ts';

/** A JSON value, as the AI SDK types it. */
export type JsonValue = null | string | number | boolean | JsonValue[] | { [key: string]: JsonValue };

/**
 * An AI SDK (v5+) `tool-result` part. A denied call is `execution-denied`; other calls that did
 * not commit are `error-text`.
 *
 * @example
 * const part: AiSdkToolResult = { type: 'tool-result', toolCallId: 'c1', toolName: 'charge', output: { type: 'json', value: { ok: true } } };
 */
export interface AiSdkToolResult {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output:
    | { type: 'text'; value: string }
    | { type: 'json'; value: JsonValue }
    | { type: 'error-text'; value: string }
    | { type: 'execution-denied'; reason?: string };
}

/**
 * Answers one settled call as an AI SDK `tool-result` part.
 *
 * @example
 * messages.push({ role: 'tool', content: calls.map(aiSdkToolResult) });
 */
export function aiSdkToolResult(call: SettledCall): AiSdkToolResult {
  return { type: 'tool-result', toolCallId: call.id, toolName: call.name, output: outputOf(call) };
}

function outputOf(call: SettledCall): AiSdkToolResult['output'] {
  if (call.status === 'committed') {
    if (typeof call.output === 'string') return { type: 'text', value: call.output };
    try {
      return { type: 'json', value: JSON.parse(JSON.stringify(call.output ?? null)) as JsonValue };
    } catch {
      return { type: 'text', value: outputText(call.output) };
    }
  }
  if (call.status === 'cancelled' && call.reason.code === 'approval_denied') {
    return { type: 'execution-denied', reason: call.reason.message };
  }
  return { type: 'error-text', value: outcomeText(call) };
}
