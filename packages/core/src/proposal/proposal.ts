import { nestsTooDeep, type Limits } from './limits.ts';
import type { ProposalSource, Reason } from '../record/record.ts';

/**
 * A tool call in one shape, whatever shape it arrived in. `arguments` is still raw: a JSON string,
 * an object, or `undefined` when the call carried none.
 *
 * @example
 * const proposal: Proposal = { id: 'call_1', name: 'charge', arguments: '{"amount_cents":1250}', source: 'openai-chat' };
 */
export interface Proposal {
  readonly id: string | undefined;
  readonly name: string;
  readonly arguments: unknown;
  readonly source: ProposalSource;
  /** The provider marked this call cut off (Responses `status: "incomplete"`). */
  readonly truncated?: boolean;
}

/**
 * The result of reading raw input: a proposal, or why it is not one (with whatever id and name
 * could still be read, so the rejection can be answered).
 *
 * @example
 * const reading: ProposalReading = readProposal(part, DEFAULT_LIMITS);
 * if (!reading.ok) console.warn(reading.reason.message);
 */
export type ProposalReading =
  | { readonly ok: true; readonly proposal: Proposal }
  | {
      readonly ok: false;
      readonly reason: Reason<'invalid_shape' | 'invalid_json' | 'too_large' | 'too_deep'>;
      readonly id?: string;
      readonly name?: string;
      readonly source: ProposalSource;
    };

const SHAPES =
  'expected one tool call: { name, arguments } with arguments as a JSON string or object, ' +
  'an OpenAI tool_calls[] entry, a Responses function_call item, an Anthropic tool_use block, ' +
  'a Gemini functionCall part, MCP tools/call params, or an AI SDK tool-call part';

type Shape = Record<string, unknown>;

const isObject = (value: unknown): value is Shape =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads any supported input into a {@link Proposal}. Never throws for model input: anything it
 * cannot read becomes a reason. A JSON string is checked against the limits before it is parsed.
 *
 * @example
 * readProposal({ type: 'tool_use', id: 'toolu_1', name: 'charge', input: { amount_cents: 1250 } }, DEFAULT_LIMITS);
 * // { ok: true, proposal: { id: 'toolu_1', name: 'charge', arguments: { amount_cents: 1250 }, source: 'anthropic' } }
 */
export function readProposal(input: unknown, limits: Limits): ProposalReading {
  if (typeof input === 'string') return readJsonProposal(input, limits);
  if (!isObject(input)) {
    const found = input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input;
    return invalidShape(`got ${found}; ${SHAPES}`, 'normalised');
  }
  return readShape(input, 'normalised');
}

function readJsonProposal(text: string, limits: Limits): ProposalReading {
  // The wrapper escapes the arguments string inside it, which can double its length.
  if (text.length > limits.maxArgumentChars * 2 + 4096) {
    return {
      ok: false,
      source: 'json',
      reason: {
        code: 'too_large',
        message: `the tool call is ${text.length} characters; the limit is ${limits.maxArgumentChars}`,
      },
    };
  }
  let parsed: unknown;
  try {
    // No depth scan first: JSON.parse does not recurse (see readArguments), only the top fields
    // of the call are read here, and its arguments then get the walk arguments always get, so a
    // call as text is decided as the same call as an object is.
    parsed = JSON.parse(text);
  } catch (error) {
    if (nestsTooDeep(text, limits.maxDepth + 2)) {
      return {
        ok: false,
        source: 'json',
        reason: { code: 'too_deep', message: `the tool call nests deeper than ${limits.maxDepth} levels` },
      };
    }
    return {
      ok: false,
      source: 'json',
      reason: {
        code: 'invalid_json',
        message: `the tool call is not valid JSON: ${(error as Error).message}`,
      },
    };
  }
  if (!isObject(parsed)) return invalidShape(`the tool call JSON is not an object; ${SHAPES}`, 'json');
  return readShape(parsed, 'json');
}

function readShape(call: Shape, wrapper: ProposalSource): ProposalReading {
  const type = call['type'];
  const fn = call['function'];
  if (isObject(fn) && (type === 'function' || type === undefined)) {
    return make(call['id'], fn['name'], fn['arguments'], pick(wrapper, 'openai-chat'));
  }
  switch (type) {
    case 'custom':
      return invalidShape(
        'custom (free-text) tools are not supported; define the tool with a JSON input schema',
        pick(wrapper, 'openai-chat'),
      );
    case 'function_call':
      return make(
        call['call_id'],
        call['name'],
        call['arguments'],
        pick(wrapper, 'openai-responses'),
        call['status'] === 'incomplete',
      );
    case 'tool_use':
      return make(call['id'], call['name'], call['input'], pick(wrapper, 'anthropic'));
    case 'tool-call':
      return make(
        call['toolCallId'],
        call['toolName'],
        'input' in call ? call['input'] : call['args'],
        pick(wrapper, 'ai-sdk'),
      );
  }
  const gemini = call['functionCall'];
  if (isObject(gemini)) return make(gemini['id'], gemini['name'], gemini['args'], pick(wrapper, 'gemini'));
  if (call['method'] === 'tools/call' && isObject(call['params'])) {
    // A JSON-RPC id numbers requests on one connection (1, 2, 3… again on the next), so it is not
    // a call id: two sessions' request 1 must not be taken for one call. The gate makes an id.
    const params = call['params'];
    return make(undefined, params['name'], params['arguments'], pick(wrapper, 'mcp'));
  }
  if (typeof call['name'] === 'string') {
    return make(call['id'], call['name'], 'arguments' in call ? call['arguments'] : call['args'], wrapper);
  }
  return invalidShape(`no tool name found; ${SHAPES}`, wrapper, readId(call['id']));
}

function pick(wrapper: ProposalSource, shape: ProposalSource): ProposalSource {
  return wrapper === 'json' ? 'json' : shape;
}

function readId(raw: unknown): string | undefined {
  if (typeof raw === 'string' && raw !== '') return raw;
  if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw);
  return undefined;
}

function make(
  rawId: unknown,
  rawName: unknown,
  args: unknown,
  source: ProposalSource,
  truncated = false,
): ProposalReading {
  const id = readId(rawId);
  if (rawId !== undefined && rawId !== null && id === undefined) {
    return invalidShape(`the call id must be a non-empty string (got ${typeof rawId})`, source);
  }
  if (typeof rawName !== 'string' || rawName === '') {
    return invalidShape('the call has no tool name', source, id);
  }
  const proposal: Proposal = truncated
    ? { id, name: rawName, arguments: args, source, truncated }
    : { id, name: rawName, arguments: args, source };
  return { ok: true, proposal };
}

function invalidShape(message: string, source: ProposalSource, id?: string, name?: string): ProposalReading {
  return {
    ok: false,
    source,
    reason: { code: 'invalid_shape', message },
    ...(id === undefined ? {} : { id }),
    ...(name === undefined ? {} : { name }),
  };
}
