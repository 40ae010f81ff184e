import type { RequestError } from '../gate/call-request.ts';
import { messageOf } from '../record/text.ts';

const BY_STATUS: { readonly [status: number]: string } = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
};

/**
 * The error a server gate answered with: its `{ error: { code, message } }` body when it sent one,
 * otherwise a code for the HTTP status and a message that names it. Never throws.
 *
 * @example
 * if (!response.ok) request.refuse(await serverError(response));
 */
export async function serverError(response: Response): Promise<RequestError> {
  const fallback: RequestError = {
    code: BY_STATUS[response.status] ?? 'bad_response',
    message: `the server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`,
  };
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return fallback;
  }
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof error !== 'object' || error === null) return fallback;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || code === '') return fallback;
  return { code, message: typeof message === 'string' && message !== '' ? message : fallback.message };
}

/**
 * The words for an error thrown by `fetch` or a stream read: its message, or what it is.
 *
 * @example
 * networkError(new TypeError('fetch failed')); // { code: 'network_error', message: 'no answer from the server: fetch failed' }
 */
export function networkError(error: unknown): RequestError {
  return { code: 'network_error', message: `no answer from the server: ${messageOf(error)}` };
}
