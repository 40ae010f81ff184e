/**
 * One JSON string (a key or a value) as it arrives, kept as the text it came in: escapes are
 * decoded by `JSON.parse` when the string ends or a preview needs it, so each character is decoded
 * once, and a long string is not copied character by character.
 *
 * @example
 * const text = createJsonString();
 * text.read('a\\"b" , ', 0); // 4: the index of the closing quote
 * text.finish();             // 'a"b'
 */
export interface JsonString {
  /**
   * Takes the string's text from `fragment[from]` on. Answers the index of its closing quote, or
   * `-1` when the whole rest of the fragment belongs to the string.
   */
  readonly read: (fragment: string, from: number) => number;
  /** The whole string, decoded, and ready for the next one; `undefined` when its escapes are not JSON. */
  readonly finish: () => string | undefined;
  /**
   * The string so far, decoded as far as its escapes are whole and never ending in half a
   * character; `undefined` when what arrived so far is not JSON.
   */
  readonly preview: () => string | undefined;
}

/**
 * Creates the reader of one JSON string at a time.
 *
 * @example
 * const text = createJsonString();
 */
export function createJsonString(): JsonString {
  /** The decoded start of the string (without `carry`). */
  let decoded = '';
  /** A high surrogate at the end of what was decoded, held back until its low half comes. */
  let carry = '';
  /** The text after `decoded`, still escaped. */
  let pending = '';
  /** The string so far ends in an odd run of backslashes, so the next character is escaped. */
  let oddBackslashes = false;

  function read(fragment: string, from: number): number {
    const n = fragment.length;
    // indexOf jumps from quote to quote natively; a quote after an odd run of backslashes is escaped.
    let end = -1;
    for (let j = from; ;) {
      const q = fragment.indexOf('"', j);
      if (q === -1) break;
      let k = q - 1;
      while (k >= from && fragment.charCodeAt(k) === 92) k--;
      if ((q - 1 - k + (k < from && oddBackslashes ? 1 : 0)) % 2 === 0) {
        end = q;
        break;
      }
      j = q + 1;
    }
    if (end === -1) {
      let k = n - 1;
      while (k >= from && fragment.charCodeAt(k) === 92) k--;
      const odd = (n - 1 - k) % 2 === 1;
      oddBackslashes = k < from ? odd !== oddBackslashes : odd;
      pending += from === 0 ? fragment : fragment.slice(from);
      return -1;
    }
    if (end > from) pending += fragment.slice(from, end);
    return end;
  }

  function finish(): string | undefined {
    const tail = pending.includes('\\') ? decode(pending) : pending;
    if (tail === undefined) return undefined;
    const value = decoded === '' && carry === '' ? tail : decoded + carry + tail;
    decoded = '';
    carry = '';
    pending = '';
    oddBackslashes = false;
    return value;
  }

  // Only the text since the last preview is decoded and looked at: reading the end of `decoded`
  // itself would flatten the whole string on every preview.
  function preview(): string | undefined {
    let piece: string | undefined = pending;
    if (pending.includes('\\')) {
      const hold = unfinishedEscape(pending, oddBackslashes);
      piece = decode(pending.slice(0, pending.length - hold));
      if (piece === undefined) return undefined;
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

  return { read, finish, preview };
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
