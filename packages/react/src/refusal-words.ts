import type { RequestError } from '@toolgate/core';

/**
 * The sentence `<ToolCallStatusRefusal>` shows after `Not approved:` (or `Not denied:`,
 * `Not cancelled:`, `Not settled:`, `Not undone:`) for each refusal code: what happened and what the person can do now. `{message}`
 * in a sentence is replaced by the server's own words. A code without a sentence shows the
 * server's message.
 *
 * @example
 * const refusals: ToolCallRefusalWords = { stale: 'la saisie a changé depuis votre lecture : relisez-la, puis décidez à nouveau.' };
 * <ToolCallStatus id={id} labels={{ refusals }} />
 */
export type ToolCallRefusalWords = Readonly<Partial<Record<string, string>>>;

/** The default sentences, for the codes a server gate and a remote gate answer with. */
export const REFUSALS: ToolCallRefusalWords = {
  stale: 'the input changed since you saw it. Review the input shown now, then decide again.',
  expired: 'the time to decide ran out, and the call was cancelled. Ask for it again if it is still needed.',
  forbidden: 'you may not decide this call. Someone who may has to do it.',
  not_awaiting:
    'the call no longer waits for a decision: it was decided elsewhere, or it is running. Its status shows where it is.',
  settled: 'the call has already ended, so there is nothing left to decide. Its status shows how it ended.',
  already_approved: 'you have already approved this input. The call waits for the other approvers.',
  invalid_edit: 'your change was refused: {message}. The call still waits for a decision.',
  not_found: 'the server does not know this call, or you may not see it. Reload the page.',
  unauthorized: 'you are not signed in. Sign in again, then decide again.',
  tampered: 'the server found this call changed outside the gate. It was not run, and this was reported.',
  offline: 'it was not sent: the server was out of reach. Decide again once the connection is back.',
  network_error:
    'no answer came from the server, so it may not have arrived. Once the connection is back, decide again if the call still waits.',
  unavailable: 'the server could not take it just now. Try again in a moment.',
  too_many_requests: 'the server is busy. Try again in a moment.',
  not_sent: 'it could not be sent: {message}. Try again.',
  invalid_output:
    'the output you gave is not one this tool returns: {message}. The call is still held; correct it, then settle again.',
  not_in_doubt:
    'the call is no longer held: someone settled it, or it moved on. Its status shows where it is.',
  in_doubt: 'nobody can tell yet whether the call took effect. Check, then settle it.',
  not_committed: 'only a call that went through can be undone. Its status shows how it ended.',
  no_compensate: 'this tool has no way to undo what it did. Undo it where it was done.',
  already_compensated: 'someone already asked to undo this call. Its status shows how that went.',
};

/**
 * The sentence for a refusal: the words for its code with the server's message in place of
 * `{message}`, or the server's message alone. Only text: a code or message that is not a string
 * (from a gate of the app's own) reads as none.
 *
 * @example
 * refusalSentence(REFUSALS, { code: 'stale', message: 'the approval names other arguments' }); // 'the input changed since you saw it. …'
 */
export function refusalSentence(words: ToolCallRefusalWords, error: RequestError): string {
  const code: unknown = error.code;
  const given: unknown = error.message;
  const message = typeof given === 'string' ? given : '';
  const own = typeof code === 'string' && Object.hasOwn(words, code) ? words[code] : undefined;
  if (typeof own !== 'string' || own === '') return message;
  // Inside a sentence, the server's own full stop would make two.
  return own.split('{message}').join(message.replace(/[.\s]+$/, ''));
}
