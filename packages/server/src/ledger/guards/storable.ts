/**
 * Whether a string can be a key in both ledgers: PostgreSQL's `text` cannot hold the NUL
 * character (it answers error 22021), so an id, a tool name or a session holding one is refused
 * before it reaches the database, never passed on to fail there.
 *
 * @example
 * if (!storable(call.id)) return rejectAsModelInput(call);
 */
export function storable(text: string): boolean {
  return !text.includes('\u0000');
}

/**
 * The text with every NUL replaced by U+FFFD, for showing (and storing) a name the model sent
 * that cannot be stored as it is.
 *
 * @example
 * printable('char\u0000ge'); // 'char\uFFFDge'
 */
export function printable(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}
