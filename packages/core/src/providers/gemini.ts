import { outcomeText } from '../outcome.ts';
import type { SettledCall } from '../record.ts';

/**
 * A Gemini `functionResponse` part. `response` is `{ output }` on success and `{ error }` otherwise
 * (the API has no error flag). `id` is sent back only when the model sent one.
 *
 * @example
 * const part: GeminiToolResult = { functionResponse: { name: 'get_weather', response: { output: { temp: 21 } } } };
 */
export interface GeminiToolResult {
  functionResponse: {
    name: string;
    id?: string;
    response: { output: unknown } | { error: string };
  };
}

/**
 * Answers one settled call as a Gemini `functionResponse` part.
 *
 * @example
 * contents.push({ role: 'user', parts: calls.map(geminiToolResult) });
 */
export function geminiToolResult(call: SettledCall): GeminiToolResult {
  const response = call.status === 'committed' ? { output: call.output ?? null } : { error: outcomeText(call) };
  return {
    functionResponse: call.generatedId ? { name: call.name, response } : { name: call.name, id: call.id, response },
  };
}
