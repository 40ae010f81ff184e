/**
 * Any value as text, for a reason a model reads and a person sees: a string as it is, an error's
 * message, anything else as JSON when it has some. Never throws: a revoked Proxy, a BigInt, a
 * cycle or a hostile `toString` still come out as words.
 *
 * @example
 * textOf('the cart changed'); // 'the cart changed'
 * textOf(new Error('boom')); // 'boom'
 * textOf({ code: 42 }); // '{"code":42}'
 */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  let subject = value;
  try {
    if (value instanceof Error) {
      const message: unknown = value.message;
      if (typeof message === 'string') return message;
      subject = message;
    }
    const json: unknown = JSON.stringify(subject);
    if (typeof json === 'string') return json;
  } catch {
    // Not JSON (a BigInt, a cycle, a throwing getter): try the value's own words next.
  }
  try {
    return String(subject);
  } catch {
    return `(a value of type ${typeof value} that cannot be shown as text)`;
  }
}

/**
 * A readable message for anything thrown.
 *
 * @example
 * messageOf(new Error('boom')); // 'boom'
 */
export function messageOf(error: unknown): string {
  return textOf(error);
}
