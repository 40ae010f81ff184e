/**
 * What a person asked a gate to do to a call.
 *
 * @example
 * const action: CallAction = 'approve';
 */
export type CallAction = 'approve' | 'deny' | 'cancel' | 'resolve' | 'compensate';

/**
 * Why a request about a call did not go through, in words a program can switch on (`code`) and a
 * person can read (`message`). From a server gate the codes are its own (`stale`, `expired`,
 * `not_awaiting`, `settled`, `forbidden`, `not_found`, `unauthorized`, …), plus `network_error`
 * when no answer came back, `bad_response` when the answer could not be read, and `offline` when
 * the decision was not sent because the connection to the server was not live.
 *
 * @example
 * const error: RequestError = { code: 'stale', message: 'the call changed since it was shown' };
 */
export interface RequestError {
  readonly code: string;
  readonly message: string;
}

/**
 * A request about one call that a gate has not finished with: `sending` while it is on its way
 * (and until the call's move arrives), `refused` when the answer was no. A gate that decides
 * locally (`createToolGate`) has none; a remote gate keeps one per call until the call moves or
 * another request is made.
 *
 * @example
 * const request = gate.requestOf?.(id);
 * if (request?.state === 'refused') show(`Not done: ${request.error.message}`);
 */
export type CallRequest =
  | { readonly action: CallAction; readonly state: 'sending' }
  | { readonly action: CallAction; readonly state: 'refused'; readonly error: RequestError };

/**
 * What a person says about a call held in doubt once they have checked: its effect happened (with
 * the output the tool would have returned), or it never did. `note` says how they know.
 *
 * @example
 * gate.resolve?.(call.id, { outcome: 'committed', output: { charge: 'ch_42', amount_cents: 1250 }, note: 'in the dashboard' });
 */
export type Resolution =
  | { readonly outcome: 'committed'; readonly output?: unknown; readonly note?: string }
  | { readonly outcome: 'not_executed'; readonly note?: string };
