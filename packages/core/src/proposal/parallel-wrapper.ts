import { readArguments } from './arguments.ts';
import type { Limits } from './limits.ts';
import type { Reason } from '../record/record.ts';

/**
 * The name of the wrapper some OpenAI models invent for parallel calls: one call to
 * `multi_tool_use.parallel` whose arguments list the real calls as
 * `{ tool_uses: [{ recipient_name: 'functions.get_weather', parameters: {…} }] }`.
 *
 * @example
 * if (call.name === PARALLEL_WRAPPER) console.warn('the model wrapped its calls');
 */
export const PARALLEL_WRAPPER = 'multi_tool_use.parallel';

/**
 * One call found inside a `multi_tool_use.parallel` wrapper.
 *
 * @example
 * const use: WrappedCall = { name: 'get_weather', arguments: { location: 'Rome' } };
 */
export interface WrappedCall {
  readonly name: string;
  readonly arguments: unknown;
}

/**
 * Reads the calls inside a `multi_tool_use.parallel` wrapper's raw arguments, within the limits.
 * Never throws: arguments that are not a list of `{ recipient_name, parameters }` come back as a
 * message saying what is wrong.
 *
 * @example
 * readParallelWrapper('{"tool_uses":[{"recipient_name":"functions.get_time","parameters":{}}]}', DEFAULT_LIMITS);
 * // { ok: true, calls: [{ name: 'get_time', arguments: {} }] }
 */
export function readParallelWrapper(
  raw: unknown,
  limits: Limits,
):
  | { readonly ok: true; readonly calls: readonly WrappedCall[] }
  | { readonly ok: false; readonly message: string } {
  const read = readArguments(raw, limits, []);
  if (!read.ok) return { ok: false, message: read.reason.message };
  const uses = read.value['tool_uses'];
  if (!Array.isArray(uses) || uses.length === 0) return { ok: false, message: 'it has no "tool_uses" list' };
  const calls: WrappedCall[] = [];
  for (const [index, use] of uses.entries()) {
    const recipient: unknown =
      typeof use === 'object' && use !== null
        ? (use as Record<string, unknown>)['recipient_name']
        : undefined;
    if (typeof recipient !== 'string' || recipient === '') {
      return { ok: false, message: `tool_uses[${index}] has no "recipient_name"` };
    }
    const name = recipient.startsWith('functions.') ? recipient.slice('functions.'.length) : recipient;
    const parameters = (use as Record<string, unknown>)['parameters'];
    calls.push({ name, arguments: parameters === undefined ? {} : parameters });
  }
  return { ok: true, calls };
}

/**
 * Why a `multi_tool_use.parallel` call is refused: it is not a tool, and the reason names the calls
 * the model meant, so that it can send them as separate tool calls.
 *
 * @example
 * parallelWrapperReason(raw, DEFAULT_LIMITS).message;
 * // '"multi_tool_use.parallel" is not a tool: the model wrapped 2 calls (get_weather, get_time) in it; send each as its own tool call'
 */
export function parallelWrapperReason(raw: unknown, limits: Limits): Reason<'invalid_shape'> {
  const read = readParallelWrapper(raw, limits);
  const what = read.ok
    ? `the model wrapped ${read.calls.length} call${read.calls.length === 1 ? '' : 's'} (${read.calls.map((c) => c.name).join(', ')}) in it`
    : `the model wrapped its calls in it, and ${read.message}`;
  return {
    code: 'invalid_shape',
    message: `"${PARALLEL_WRAPPER}" is not a tool: ${what}; send each as its own tool call`,
  };
}
