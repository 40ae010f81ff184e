import { createJsonContainers, type JsonContainers } from './json-containers.ts';
import { createJsonString, type JsonString } from './json-string.ts';

/**
 * How far a {@link PartialJson} has read:
 * - `empty`: nothing but whitespace yet;
 * - `open`: a value has started and is not finished;
 * - `complete`: one whole value, with nothing but whitespace after it;
 * - `trailing`: one whole value followed by more text (a second object, prose, a code fence);
 * - `invalid`: text JSON does not allow;
 * - `too_deep`: nesting passed `maxDepth`, so reading stopped.
 *
 * @example
 * const state: PartialJsonState = 'open';
 */
export type PartialJsonState = 'empty' | 'open' | 'complete' | 'trailing' | 'invalid' | 'too_deep';

/**
 * An incremental reader for JSON text that arrives in pieces. Each character is read once, so
 * feeding a 200 KB argument in 20,000 fragments costs about as much as feeding it whole; re-parsing
 * the whole buffer on every fragment would cost time quadratic in its length.
 *
 * @example
 * const json: PartialJson = createPartialJson();
 * json.push('{"q":"ra');
 * json.preview(); // { q: 'ra' }
 */
export interface PartialJson {
  /** Reads the next fragment. Never throws: bad text moves `state` to `invalid`. */
  readonly push: (fragment: string) => void;
  /**
   * The best reading so far: finished values as they are, the open string as far as it has come,
   * keys whose value has not started left out. Unchanged parts keep their identity from one
   * reading to the next, and the result is cached until more text changes it. Treat it as read-only.
   */
  readonly preview: () => unknown;
  readonly state: () => PartialJsonState;
}

const enum Mode {
  Value,
  Str,
  Num,
  Literal,
  AfterValue,
  Key,
  AfterKey,
  Done,
  Stopped,
}

const NOTHING: unique symbol = Symbol('nothing');
const LITERALS = ['true', 'false', 'null'] as const;
const LITERAL_VALUES = [true, false, null] as const;

/** Everything one reader knows: where the state machine is, and the parts it reads with. */
interface Reader {
  mode: Mode;
  state: PartialJsonState;
  root: unknown;
  readonly containers: JsonContainers;
  readonly text: JsonString;
  /** The string being read is a key. */
  textIsKey: boolean;
  /** The number being read. */
  digits: string;
  literal: number;
  literalAt: number;
  cached: unknown;
  /** Text arrived since the last preview. */
  fresh: boolean;
}

/**
 * Creates an incremental reader for one JSON value arriving in fragments, with a live preview
 * for a UI. It is a previewer, not a validator: a tool's arguments are still parsed and checked
 * whole when the provider says they are complete.
 *
 * @example
 * const json = createPartialJson();
 * json.push('{"path":"notes.md","content":"# Quar');
 * json.preview(); // { path: 'notes.md', content: '# Quar' }
 * json.push('terly"}');
 * json.state();   // 'complete'
 */
export function createPartialJson(options: { readonly maxDepth?: number } = {}): PartialJson {
  const reader: Reader = {
    mode: Mode.Value,
    state: 'empty',
    root: NOTHING,
    containers: createJsonContainers(options.maxDepth ?? 64),
    text: createJsonString(),
    textIsKey: false,
    digits: '',
    literal: 0,
    literalAt: 0,
    cached: undefined,
    fresh: true,
  };
  return {
    push: (fragment) => push(reader, fragment),
    preview: () => preview(reader),
    state: () => reader.state,
  };
}

function push(r: Reader, fragment: string): void {
  if (fragment.length === 0 || r.mode === Mode.Stopped) return;
  r.fresh = true;
  const n = fragment.length;
  let i = 0;
  while (i < n) {
    const mode = r.mode;
    if (mode === Mode.Str) i = readString(r, fragment, i);
    else if (mode === Mode.Num) i = readNumber(r, fragment, i);
    else if (mode === Mode.Literal) i = readLiteral(r, fragment, i);
    else {
      const c = fragment.charCodeAt(i++);
      if (c === 32 || c === 10 || c === 13 || c === 9) continue;
      switch (mode) {
        case Mode.Value:
          startValue(r, c);
          break;
        case Mode.Key:
          if (c === 34) {
            r.mode = Mode.Str;
            r.textIsKey = true;
          } else if (c !== 125 || r.containers.innermost()?.size !== 0 || !close(r, false)) fail(r);
          break;
        case Mode.AfterKey:
          if (c === 58) r.mode = Mode.Value;
          else fail(r);
          break;
        case Mode.AfterValue:
          if (c === 44) r.mode = r.containers.innermost()?.array === true ? Mode.Value : Mode.Key;
          else if ((c !== 93 && c !== 125) || !close(r, c === 93)) fail(r);
          break;
        default:
          // Done: a second value, prose or a code fence after the first.
          r.mode = Mode.Stopped;
          r.state = 'trailing';
          return;
      }
    }
    // A step above may have stopped reading; TypeScript still holds the check at the top.
    if ((r.mode as Mode) === Mode.Stopped) return;
  }
}

/** Reads a string's text; answers where reading goes on (past the fragment while the string is open). */
function readString(r: Reader, fragment: string, from: number): number {
  const end = r.text.read(fragment, from);
  if (end === -1) return fragment.length;
  const value = r.text.finish();
  if (value === undefined) fail(r);
  else if (r.textIsKey) {
    r.containers.setKey(value);
    r.mode = Mode.AfterKey;
  } else emit(r, value);
  return end + 1;
}

function readNumber(r: Reader, fragment: string, from: number): number {
  const n = fragment.length;
  let j = from;
  while (j < n && isNumberChar(fragment.charCodeAt(j))) j++;
  r.digits += fragment.slice(from, j);
  if (j === n) return n;
  const value = Number(r.digits);
  r.digits = '';
  if (Number.isFinite(value)) emit(r, value);
  else fail(r);
  return j;
}

function readLiteral(r: Reader, fragment: string, at: number): number {
  const word = LITERALS[r.literal] as string;
  if (fragment.charCodeAt(at) !== word.charCodeAt(r.literalAt)) {
    fail(r);
    return at;
  }
  if (++r.literalAt === word.length) emit(r, LITERAL_VALUES[r.literal]);
  return at + 1;
}

function startValue(r: Reader, c: number): void {
  if (r.state === 'empty') r.state = 'open';
  if (c === 34) {
    r.mode = Mode.Str;
    r.textIsKey = false;
  } else if (c === 123 || c === 91) open(r, c === 91);
  else if (c === 93 && isEmptyArray(r.containers.innermost())) close(r, true);
  else if (c === 45 || (c >= 48 && c <= 57)) {
    r.mode = Mode.Num;
    r.digits = String.fromCharCode(c);
  } else if (c === 116 || c === 102 || c === 110) {
    r.mode = Mode.Literal;
    r.literal = c === 116 ? 0 : c === 102 ? 1 : 2;
    r.literalAt = 1;
  } else fail(r);
}

function emit(r: Reader, value: unknown): void {
  if (r.containers.add(value)) {
    r.mode = Mode.AfterValue;
    return;
  }
  r.root = value;
  r.mode = Mode.Done;
  r.state = 'complete';
}

function open(r: Reader, array: boolean): void {
  if (!r.containers.open(array)) {
    r.mode = Mode.Stopped;
    r.state = 'too_deep';
    return;
  }
  r.state = 'open';
  r.mode = array ? Mode.Value : Mode.Key;
}

function close(r: Reader, array: boolean): boolean {
  const closed = r.containers.close(array, NOTHING);
  if (closed === NOTHING) return false;
  emit(r, closed);
  return true;
}

function fail(r: Reader): void {
  r.mode = Mode.Stopped;
  r.state = 'invalid';
}

function preview(r: Reader): unknown {
  if (!r.fresh) return r.cached;
  r.fresh = false;
  if (r.root !== NOTHING) {
    r.cached = r.root;
    return r.cached;
  }
  const child = r.state === 'invalid' || r.state === 'too_deep' ? NOTHING : openScalar(r);
  const shown = r.containers.snapshot(child, NOTHING);
  r.cached = shown === NOTHING ? undefined : shown;
  return r.cached;
}

/** The value being read at the innermost level, if it can be shown yet. */
function openScalar(r: Reader): unknown {
  if (r.mode === Mode.Str) return r.textIsKey ? NOTHING : (r.text.preview() ?? NOTHING);
  if (r.mode === Mode.Num) {
    const value = Number(r.digits);
    return Number.isFinite(value) ? value : NOTHING;
  }
  return NOTHING;
}

function isEmptyArray(container: { readonly array: boolean; readonly size: number } | undefined): boolean {
  return container !== undefined && container.array && container.size === 0;
}

function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45;
}
