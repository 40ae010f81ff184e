import type { Issue } from '@toolgate/core';

/**
 * Why the server gate refused an approval, a denial or a cancellation. The same codes travel over
 * HTTP (`{ error: { code, message } }`), so a program can switch on them:
 * - `not_found`: no such call, or one this principal may not see;
 * - `forbidden`: the principal may see the call but not decide it;
 * - `stale`: the approval names other arguments than the call holds (another input hash);
 * - `expired`: the approval's time ran out, and the call was cancelled with `approval_expired`;
 * - `not_awaiting`: the call is not waiting for a person (it is running, or was decided already);
 * - `settled`: the call has ended;
 * - `tampered`: the call's row no longer says what the audit trail says of it (changed in the
 *   database outside the gate): nothing was run, and it was reported;
 * - `invalid_edit`: the edited input was refused (schema, `authorize`, a budget, a field the model
 *   did not propose, another tool); the call keeps waiting;
 * - `already_approved`: this approver has approved this input already; the call waits for others;
 * - `in_doubt`: the call's outcome is unknown and held for a person: settle it with `resolve`;
 * - `not_in_doubt`: `resolve` names a call that is not held in doubt;
 * - `invalid_output`: `resolve` gave an output the tool's `outputSchema` refuses; the call stays held;
 * - `not_committed`: only a committed call can be compensated;
 * - `no_compensate`: the call's tool has no `compensate`;
 * - `already_compensated`: the call was compensated already (or its compensation is under way).
 *
 * @example
 * const code: DecisionCode = 'stale';
 */
export type DecisionCode =
  | 'not_found'
  | 'forbidden'
  | 'stale'
  | 'expired'
  | 'not_awaiting'
  | 'settled'
  | 'invalid_edit'
  | 'already_approved'
  | 'tampered'
  | 'in_doubt'
  | 'not_in_doubt'
  | 'invalid_output'
  | 'not_committed'
  | 'no_compensate'
  | 'already_compensated';

/**
 * What `approve`, `deny` and `cancel` answer: done, or refused with a code and a sentence. Every
 * refusal is also an event in the audit trail, naming who asked.
 *
 * @example
 * const decision = await serverGate.approve(id, { principal: user.id, inputHash });
 * if (!decision.ok) return Response.json({ error: { code: decision.code, message: decision.message } }, { status: 409 });
 */
export type Decision =
  | {
      readonly ok: true;
      /** On a call that needs several approvers: how many must still approve before it runs (0: it runs). */
      readonly left?: number;
    }
  | {
      readonly ok: false;
      readonly code: DecisionCode;
      readonly message: string;
      readonly issues?: readonly Issue[];
    };

/**
 * Codes of refusal events in the audit trail: the decision codes, and `id_conflict` for a
 * proposal that reused a call id with other arguments.
 *
 * @example
 * const code: RefusalCode = 'id_conflict';
 */
export type RefusalCode = DecisionCode | 'id_conflict';

const WHY: Readonly<Record<DecisionCode, string>> = {
  not_found: 'there is no such call',
  forbidden: 'this principal may not decide this call',
  stale: 'the approval names other arguments than the call holds; reload the call and approve what it shows',
  expired: 'the approval expired; the call was cancelled',
  not_awaiting: 'the call is not waiting for approval',
  settled: 'the call has already ended',
  tampered: 'the call was changed in the database outside the gate; it was not run, and this was reported',
  invalid_edit: 'the edited input was refused; the call still waits for a decision',
  already_approved: 'this approver has already approved this input; the call waits for the others',
  in_doubt:
    "the call's outcome is unknown and held for a person: check the system it called, then settle it with resolve",
  not_in_doubt: 'the call is not held in doubt; only a held call can be settled',
  invalid_output: "the output given does not match the tool's output schema; the call stays held",
  not_committed: 'only a committed call can be compensated',
  no_compensate: "the call's tool has no compensate",
  already_compensated: 'the call was compensated already, or its compensation is under way',
};

/**
 * A refused decision with the standard sentence for its code, or a more precise one.
 *
 * @example
 * return refused('settled');
 */
export function refused(
  code: DecisionCode,
  message: string = WHY[code],
  issues?: readonly Issue[],
): Decision {
  return issues === undefined ? { ok: false, code, message } : { ok: false, code, message, issues };
}

/**
 * The HTTP status for a decision: 200, or 403 / 404 / 409 for a refusal.
 *
 * @example
 * new Response(JSON.stringify(body), { status: decisionStatus(decision) });
 */
export function decisionStatus(decision: Decision): 200 | 403 | 404 | 409 {
  if (decision.ok) return 200;
  switch (decision.code) {
    case 'not_found':
      return 404;
    case 'forbidden':
      return 403;
    default:
      return 409;
  }
}
