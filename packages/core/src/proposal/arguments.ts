import { nestsTooDeep, type Limits } from './limits.ts';
import { checkValue, copyValue, type ValueProblem } from './value-walk.ts';
import type { Reason, RejectedCode, Repair } from '../record/record.ts';
import type { RepairKind } from './repair.ts';
import { describeValue } from '../schema/schema.ts';

/**
 * Raw arguments read into an object, or why they could not be.
 *
 * @example
 * const reading: ArgumentsReading = readArguments('{"q":1}', DEFAULT_LIMITS, []);
 */
export type ArgumentsReading =
  | { readonly ok: true; readonly value: Record<string, unknown>; readonly repairs: readonly Repair[] }
  | { readonly ok: false; readonly reason: Reason<RejectedCode> };

const NO_REPAIRS: readonly Repair[] = Object.freeze([]);

/**
 * Reads a call's raw arguments (a JSON string, an object, or nothing) into an object, checking
 * the size before parsing and the rest in one walk over the value, so text and an object holding
 * the same value get the same answer. A value read is deeply frozen (by that walk): it becomes
 * the record's input and the tool's, as it is. Known model defects are rejected with a reason naming
 * them, unless the tool allows that repair.
 *
 * @example
 * readArguments('{"amount_cents":1250}', DEFAULT_LIMITS, []);
 * // { ok: true, value: { amount_cents: 1250 }, repairs: [] }
 */
export function readArguments(
  raw: unknown,
  limits: Limits,
  allowed: readonly RepairKind[],
): ArgumentsReading {
  if (raw === undefined) return { ok: true, value: Object.freeze({}), repairs: NO_REPAIRS };
  if (typeof raw === 'string') return readText(raw, limits, allowed);
  const copied = copyValue(raw, limits, true);
  return copied.kind === 'ok'
    ? asObject(copied.value, NO_REPAIRS)
    : { ok: false, reason: problemReason(copied, limits) };
}

/**
 * The rejection for what a bounded walk over a value found.
 *
 * @example
 * problemReason({ kind: 'too_deep' }, DEFAULT_LIMITS).code; // 'too_deep'
 */
export function problemReason(problem: ValueProblem, limits: Limits): Reason<RejectedCode> {
  switch (problem.kind) {
    case 'too_large':
      return tooLarge(limits).reason;
    case 'too_deep':
      return tooDeep(limits).reason;
    case 'proto_key':
      return protoKey(problem.path).reason;
    case 'not_finite':
      return invalid(
        'invalid_arguments',
        'the arguments hold a number that is not finite (JSON numbers past ±1.8e308 read as Infinity)',
        {
          path: problem.path,
          message: `must be a finite number (got ${problem.found})`,
        },
      ).reason;
    case 'not_json':
      return invalid('invalid_arguments', 'the arguments hold a value JSON cannot carry', {
        path: problem.path,
        message: `is not a JSON value (got ${problem.found})`,
      }).reason;
  }
}

function readText(text: string, limits: Limits, allowed: readonly RepairKind[]): ArgumentsReading {
  if (text.length > limits.maxArgumentChars) return tooLarge(limits, text.length);
  let value: unknown;
  let repairs: readonly Repair[] = NO_REPAIRS;
  try {
    // Parsed before its depth is measured, because parsing cannot overflow the call stack:
    // V8's JSON parser keeps its nesting on a heap stack of its own, not in recursion (Node 20
    // parses '['.repeat(1e7) + ']'.repeat(1e7), and as deep an object, with a 50 KB call stack,
    // `node --stack-size=50`); SpiderMonkey's and JavaScriptCore's parsers keep one too. Were a
    // parser to throw a RangeError instead, the catch below still answers too_deep. Nothing
    // recursive touches the value afterwards: checkValue keeps its own stack.
    value = JSON.parse(text);
  } catch (error) {
    // Text that nests too deep says so, whether or not it also fails to parse.
    if (nestsTooDeep(text, limits.maxDepth)) return tooDeep(limits);
    const salvaged = salvage(text, (error as Error).message, allowed);
    if (!salvaged.ok) return salvaged;
    value = salvaged.value;
    repairs = salvaged.repairs;
  }
  if (typeof value === 'string') {
    const inner = parseOrUndefined(value);
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) {
      if (!allowed.includes('double_encoded')) {
        return invalid(
          'invalid_json',
          'the arguments are double-encoded: a JSON string that contains the JSON object; send the object itself',
        );
      }
      value = inner;
      repairs = [
        ...repairs,
        { kind: 'double_encoded', path: '', message: 'decoded the JSON object inside the arguments string' },
      ];
    }
  }
  // The parsed value is the one walk's input: depth, `__proto__` keys and numbers out of range
  // (`1e400` parses to Infinity) are refused here, as they are in an object.
  const checked = checkValue(value, limits.maxDepth);
  if (checked.kind !== 'ok') return { ok: false, reason: problemReason(checked, limits) };
  return asObject(value, repairs);
}

/**
 * Explains text that `JSON.parse` refused, and repairs it where the tool allows: an empty string,
 * a code fence, prose after the JSON. Two objects back to back are never merged or split here.
 */
function salvage(
  text: string,
  parseError: string,
  allowed: readonly RepairKind[],
): { ok: true; value: unknown; repairs: readonly Repair[] } | { ok: false; reason: Reason<RejectedCode> } {
  const trimmed = text.trim();
  if (trimmed === '') {
    if (allowed.includes('empty_arguments')) {
      return {
        ok: true,
        value: {},
        repairs: [{ kind: 'empty_arguments', path: '', message: 'read empty arguments as {}' }],
      };
    }
    return invalid('invalid_json', 'the arguments are an empty string; a tool without arguments takes {}');
  }
  const fenced = /^```[a-zA-Z]*\s*\n?/.exec(trimmed);
  const body = fenced ? trimmed.slice(fenced[0].length) : trimmed;
  const end = endOfFirstValue(body);
  if (end !== undefined) {
    const first = parseOrUndefined(body.slice(0, end));
    const rest = body.slice(end).trim();
    if (first !== undefined && (rest !== '' || fenced)) {
      if (rest.startsWith('{')) {
        return invalid(
          'invalid_json',
          'the arguments hold two JSON objects back to back ({…}{…}); send one call per tool call',
        );
      }
      const onlyFence = /^```\s*$/.test(rest);
      if (allowed.includes('trailing_text')) {
        return {
          ok: true,
          value: first,
          repairs: [
            {
              kind: 'trailing_text',
              path: '',
              message:
                fenced || onlyFence
                  ? 'removed the code fence around the JSON'
                  : `dropped ${rest.length} characters of text after the JSON`,
            },
          ],
        };
      }
      return invalid(
        'invalid_json',
        fenced || onlyFence
          ? 'the arguments are wrapped in a code fence; send the bare JSON object'
          : `the arguments have text after the JSON object (${JSON.stringify(rest.slice(0, 40))}); send only the JSON object`,
      );
    }
  }
  return invalid('invalid_json', `the arguments are not valid JSON: ${parseError}`);
}

/** Where the first complete JSON object or array in `text` ends, if it is complete. */
function endOfFirstValue(text: string): number | undefined {
  const open = text.charCodeAt(0);
  if (open !== 123 && open !== 91) return undefined;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 123 || c === 91) depth++;
    else if ((c === 125 || c === 93) && --depth === 0) return i + 1;
  }
  return undefined;
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function asObject(value: unknown, repairs: readonly Repair[]): ArgumentsReading {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return { ok: true, value: value as Record<string, unknown>, repairs };
  }
  return invalid('invalid_arguments', 'the arguments must be a JSON object', {
    path: '',
    message: `must be object (got ${describeValue(value)})`,
    keyword: 'type',
  });
}

function tooLarge(limits: Limits, length?: number): { ok: false; reason: Reason<RejectedCode> } {
  const size = length === undefined ? 'more than' : `${length} characters; more than`;
  return invalid('too_large', `the arguments are ${size} the limit of ${limits.maxArgumentChars} characters`);
}

function tooDeep(limits: Limits): { ok: false; reason: Reason<RejectedCode> } {
  return invalid('too_deep', `the arguments nest deeper than ${limits.maxDepth} levels`);
}

function protoKey(path: string): { ok: false; reason: Reason<RejectedCode> } {
  return invalid('invalid_arguments', 'the arguments use a forbidden key', {
    path,
    message: 'is a forbidden key (__proto__)',
    keyword: 'forbidden',
  });
}

function invalid(
  code: RejectedCode,
  message: string,
  issue?: { path: string; message: string; keyword?: string },
): { ok: false; reason: Reason<RejectedCode> } {
  return { ok: false, reason: issue ? { code, message, issues: [issue] } : { code, message } };
}
