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

interface Frame {
  readonly array: boolean;
  readonly value: Record<string, unknown> | unknown[];
  /** For objects: the key whose value is being read, once its colon has been seen. */
  key: string | undefined;
  /** How many values it holds, so that `{}` and `[]` close but `{"a":1,}` and `[1,]` do not. */
  size: number;
}

const NOTHING: unique symbol = Symbol('nothing');
const LITERALS = ['true', 'false', 'null'] as const;
const LITERAL_VALUES = [true, false, null] as const;

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
  const maxDepth = options.maxDepth ?? 64;
  const stack: Frame[] = [];
  let mode = Mode.Value;
  let state: PartialJsonState = 'empty';
  let root: unknown = NOTHING;
  // The string being read (a key or a value) is kept as the text it arrived in; escapes are decoded
  // by JSON.parse when the string ends or a preview needs it, so each character is decoded once.
  /** The decoded start of the string (without `carry`). */
  let decoded = '';
  /** A high surrogate at the end of what was decoded, held back until its low half comes. */
  let carry = '';
  /** The text after `decoded`, still escaped. */
  let pending = '';
  /** The string so far ends in an odd run of backslashes, so the next character is escaped. */
  let oddBackslashes = false;
  let textIsKey = false;
  /** The number being read. */
  let digits = '';
  let literal = 0;
  let literalAt = 0;
  let cached: unknown = undefined;
  let fresh = true;

  function emit(value: unknown): void {
    const top = stack[stack.length - 1];
    if (top === undefined) {
      root = value;
      mode = Mode.Done;
      state = 'complete';
      return;
    }
    if (top.array) (top.value as unknown[]).push(value);
    else setKey(top.value as Record<string, unknown>, top.key as string, value);
    top.key = undefined;
    top.size++;
    mode = Mode.AfterValue;
  }

  function open(array: boolean): void {
    if (stack.length >= maxDepth) {
      mode = Mode.Stopped;
      state = 'too_deep';
      return;
    }
    stack.push({ array, value: array ? [] : {}, key: undefined, size: 0 });
    state = 'open';
    mode = array ? Mode.Value : Mode.Key;
  }

  function close(array: boolean): boolean {
    const top = stack[stack.length - 1];
    if (top === undefined || top.array !== array) return false;
    stack.pop();
    emit(top.value);
    return true;
  }

  function fail(): void {
    mode = Mode.Stopped;
    state = 'invalid';
  }

  /** The whole string, decoded; `undefined` when its escapes are not valid JSON. */
  function endString(): string | undefined {
    const tail = pending.includes('\\') ? decode(pending) : pending;
    if (tail === undefined) return undefined;
    const value = decoded === '' && carry === '' ? tail : decoded + carry + tail;
    decoded = '';
    carry = '';
    pending = '';
    oddBackslashes = false;
    return value;
  }

  function push(fragment: string): void {
    if (fragment.length === 0 || mode === Mode.Stopped) return;
    fresh = true;
    const n = fragment.length;
    let i = 0;
    while (i < n) {
      switch (mode) {
        case Mode.Str: {
          // indexOf jumps from quote to quote natively; a quote after an odd run of backslashes
          // is escaped. Escapes themselves are left for JSON.parse to decode.
          let end = -1;
          for (let j = i; ; ) {
            const q = fragment.indexOf('"', j);
            if (q === -1) break;
            let k = q - 1;
            while (k >= i && fragment.charCodeAt(k) === 92) k--;
            if ((q - 1 - k + (k < i && oddBackslashes ? 1 : 0)) % 2 === 0) {
              end = q;
              break;
            }
            j = q + 1;
          }
          if (end === -1) {
            let k = n - 1;
            while (k >= i && fragment.charCodeAt(k) === 92) k--;
            const odd = (n - 1 - k) % 2 === 1;
            oddBackslashes = k < i ? odd !== oddBackslashes : odd;
            pending += i === 0 ? fragment : fragment.slice(i);
            return;
          }
          if (end > i) pending += fragment.slice(i, end);
          i = end + 1;
          const value = endString();
          if (value === undefined) fail();
          else if (textIsKey) {
            (stack[stack.length - 1] as Frame).key = value;
            mode = Mode.AfterKey;
          } else emit(value);
          continue;
        }
        case Mode.Num: {
          let j = i;
          while (j < n && isNumberChar(fragment.charCodeAt(j))) j++;
          digits += fragment.slice(i, j);
          if (j === n) return;
          i = j;
          const value = Number(digits);
          digits = '';
          if (!isJsonNumber(value)) {
            fail();
            continue;
          }
          emit(value);
          continue;
        }
        case Mode.Literal: {
          const word = LITERALS[literal] as string;
          if (fragment.charCodeAt(i) !== word.charCodeAt(literalAt)) {
            fail();
            continue;
          }
          i++;
          if (++literalAt === word.length) emit(LITERAL_VALUES[literal]);
          continue;
        }
        default:
          break;
      }
      const c = fragment.charCodeAt(i++);
      if (c === 32 || c === 10 || c === 13 || c === 9) continue;
      switch (mode) {
        case Mode.Value:
          startValue(c);
          break;
        case Mode.Key:
          if (c === 34) {
            mode = Mode.Str;
            textIsKey = true;
          } else if (c !== 125 || stack[stack.length - 1]?.size !== 0 || !close(false)) fail();
          break;
        case Mode.AfterKey:
          if (c === 58) mode = Mode.Value;
          else fail();
          break;
        case Mode.AfterValue: {
          const top = stack[stack.length - 1] as Frame;
          if (c === 44) mode = top.array ? Mode.Value : Mode.Key;
          else if (c === 93 || c === 125) {
            if (!close(c === 93)) fail();
          } else fail();
          break;
        }
        case Mode.Done:
          mode = Mode.Stopped;
          state = 'trailing';
          return;
      }
    }
  }

  function startValue(c: number): void {
    if (state === 'empty') state = 'open';
    if (c === 34) {
      mode = Mode.Str;
      textIsKey = false;
    } else if (c === 123) open(false);
    else if (c === 91) open(true);
    else if (c === 93 && stack[stack.length - 1]?.array === true && stack[stack.length - 1]?.size === 0) close(true);
    else if (c === 45 || (c >= 48 && c <= 57)) {
      mode = Mode.Num;
      digits = String.fromCharCode(c);
    } else if (c === 116 || c === 102 || c === 110) {
      mode = Mode.Literal;
      literal = c === 116 ? 0 : c === 102 ? 1 : 2;
      literalAt = 1;
    } else fail();
  }

  /** The value being read at the innermost level, if it can be shown yet. */
  function openScalar(): unknown {
    if (mode === Mode.Str) return textIsKey ? NOTHING : openString();
    if (mode === Mode.Num) {
      const value = Number(digits);
      return isJsonNumber(value) ? value : NOTHING;
    }
    return NOTHING;
  }

  /**
   * The open string decoded as far as its escapes are whole, never ending in half a character.
   * Only the text since the last preview is decoded and looked at: reading the end of `decoded`
   * itself would flatten the whole string on every preview.
   */
  function openString(): unknown {
    let piece: string | undefined = pending;
    if (pending.includes('\\')) {
      const hold = unfinishedEscape(pending, oddBackslashes);
      piece = decode(pending.slice(0, pending.length - hold));
      if (piece === undefined) return NOTHING;
      pending = pending.slice(pending.length - hold);
    } else pending = '';
    if (piece !== '') {
      piece = carry + piece;
      const last = piece.charCodeAt(piece.length - 1);
      carry = last >= 0xd800 && last <= 0xdbff ? piece.slice(-1) : '';
      decoded += carry === '' ? piece : piece.slice(0, -1);
    }
    return decoded;
  }

  function preview(): unknown {
    if (!fresh) return cached;
    fresh = false;
    if (root !== NOTHING) {
      cached = root;
      return cached;
    }
    // Only the containers still open can change, so only they are copied; everything finished
    // inside them is shared with the previous preview.
    let child: unknown = state === 'invalid' || state === 'too_deep' ? NOTHING : openScalar();
    for (let level = stack.length - 1; level >= 0; level--) {
      const frame = stack[level] as Frame;
      if (frame.array) {
        const copy = (frame.value as unknown[]).slice();
        if (child !== NOTHING) copy.push(child);
        child = copy;
      } else {
        const copy = { ...(frame.value as Record<string, unknown>) };
        if (child !== NOTHING && frame.key !== undefined) setKey(copy, frame.key, child);
        child = copy;
      }
    }
    cached = child === NOTHING ? undefined : child;
    return cached;
  }

  return { push, preview, state: () => state };
}

/** Sets a key the way `JSON.parse` does: `__proto__` becomes an own property, never the prototype. */
function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** How many characters at the end of `text` are an escape that has not finished arriving. */
function unfinishedEscape(text: string, oddBackslashes: boolean): number {
  if (oddBackslashes) return 1;
  // A \u escape with fewer than four hex digits so far, whose backslash is not itself escaped.
  for (let digits = 0; digits <= 3; digits++) {
    const at = text.length - 2 - digits;
    if (at < 0) break;
    if (text.charCodeAt(at) !== 92 || text.charCodeAt(at + 1) !== 117) continue;
    let k = at;
    while (k >= 0 && text.charCodeAt(k) === 92) k--;
    if ((at - k) % 2 === 1) return digits + 2;
  }
  return 0;
}

function decode(escapedText: string): string | undefined {
  try {
    return JSON.parse(`"${escapedText}"`) as string;
  } catch {
    return undefined;
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45;
}

function isJsonNumber(value: number): boolean {
  return Number.isFinite(value);
}
