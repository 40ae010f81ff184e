import canonicalize from 'canonicalize';

/**
 * The RFC 8785 canonical JSON of a value: keys sorted, numbers and strings written one way, so
 * that two equal values always give the same text wherever they were serialised.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined)
    throw new TypeError('canonicalJson: the value has no JSON form (undefined, a function or a symbol).');
  return text;
}

/**
 * The SHA-256 (lowercase hex) of the canonical JSON of a call's validated input: what a person was
 * shown when they approve. The server gate runs a call only when the approval names this hash, so
 * an approval can't be replayed onto other arguments. Uses Web Crypto, so it runs in browsers,
 * workers and Node alike.
 *
 * @example
 * const hash = await inputHash(call.input);
 * await fetch(`/api/toolgate/calls/${call.id}/approve`, { method: 'POST', body: JSON.stringify({ inputHash: hash }) });
 */
export async function inputHash(input: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(input));
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  let hex = '';
  for (const byte of new Uint8Array(digest)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
