import type { Evidence, InputEdit, SettledCall, ToolCallRecord } from '../record/record.ts';
import { textOf } from '../record/text.ts';

/**
 * The text a model reads about a settled call: the output for a committed call; otherwise the
 * status, the reason code, what went wrong (each offending argument path and what was expected)
 * and what to do next.
 *
 * @example
 * outcomeText(call);
 * // 'Error: the call to "charge" was rejected (invalid_arguments). Nothing was run.\n- /amount_cents: must be integer (got string "12.50")\nCorrect these arguments and call "charge" again.'
 */
export function outcomeText(call: SettledCall): string {
  if (call.edit === undefined) return statusText(call);
  return `${editText(call.name, call.edit)}\n${statusText(call)}`;
}

function statusText(call: SettledCall): string {
  if (call.status === 'committed') {
    const output = outputText(call.output);
    const text =
      call.evidence === undefined ? output : `${evidenceText(call.name, call.evidence)}\n${output}`;
    const undone = call.compensation?.status === 'committed' ? call.compensation : undefined;
    if (undone === undefined) return text;
    const why = undone.reason === undefined ? '' : `: ${undone.reason}`;
    return `${text}\nIt was undone afterwards (asked by ${undone.by}${why}); the undoing returned ${outputText(undone.output)}.`;
  }
  const tool = `"${call.name || '(no name)'}"`;
  switch (call.status) {
    case 'rejected': {
      const { reason } = call;
      const head = `Error: the call to ${tool} was rejected (${reason.code}). Nothing was run.`;
      if (reason.code === 'invalid_arguments' && reason.issues !== undefined && reason.issues.length > 0) {
        const lines = reason.issues.map((issue) => `- ${issue.path || '(arguments)'}: ${issue.message}`);
        return `${head}\n${lines.join('\n')}\nCorrect these arguments and call ${tool} again.`;
      }
      return `${head}\n${reason.message}.\n${REJECTED_NEXT[reason.code].replace('$tool', tool)}`;
    }
    case 'cancelled': {
      const { reason } = call;
      return `The call to ${tool} was cancelled (${reason.code}): ${reason.message}. Nothing was changed.${
        reason.code === 'approval_denied' || reason.code === 'user_cancelled'
          ? ' Do not retry it unless the user asks.'
          : ''
      }`;
    }
    case 'failed':
      // An interrupted call may have had its effect before the server stopped: saying "nothing was
      // changed" could make the model pay twice.
      // The server's own reason already says so; the model is told it once.
      return call.reason.code === 'interrupted'
        ? `Error: the call to ${tool} failed (interrupted): ${call.reason.message}${
            /may or may not have taken effect/i.test(call.reason.message)
              ? ''
              : '. It may or may not have taken effect'
          }. Check before calling ${tool} again.`
        : `Error: the call to ${tool} failed (${call.reason.code}): ${call.reason.message}. Nothing was changed.`;
  }
}

const REJECTED_NEXT = {
  invalid_json: 'Send the arguments again as one valid JSON object and call $tool again.',
  invalid_shape: 'Send one tool call with a tool name and a JSON object of arguments.',
  unknown_tool: 'Call one of the registered tools instead.',
  tool_unavailable: 'Do not call $tool again; it cannot be used until the app is fixed.',
  invalid_arguments: 'Correct the arguments and call $tool again.',
  too_large: 'Send smaller arguments.',
  too_deep: 'Send arguments that nest less deeply.',
  unauthorized: 'Do not retry this call unless the user asks.',
  truncated: 'Your output hit its length limit; call $tool again with shorter arguments.',
  id_conflict: 'Each tool call needs an id of its own; call $tool again with a new id.',
  budget_exceeded: 'Do not retry this call as it is; ask the user, or wait until the budget has room.',
} as const;

/**
 * What the model reads first about a call committed on evidence: its run's own answer was lost, so
 * the output is what the system it called (or a person who checked) says happened. It did happen:
 * the model must not call it again.
 */
function evidenceText(name: string, evidence: Evidence): string {
  const tool = `"${name || '(no name)'}"`;
  const head = `The call to ${tool} was done, but its answer was lost on the way back; `;
  if (evidence.source === 'downstream')
    return `${head}this outcome was settled on the evidence of the system it called (found by its idempotency key). Do not call ${tool} again for this.`;
  const note = evidence.note === undefined || evidence.note === '' ? '' : ` Their note: ${evidence.note}`;
  const who = evidence.by === undefined ? 'a person' : `a person (${evidence.by})`;
  return `${head}${who} checked and settled it as done.${note} Do not call ${tool} again for this.`;
}

/**
 * What the model reads about a call whose outcome nobody can tell, held for a person (`executing`
 * with `doubt`): outcome unknown, a person will check. `undefined` for any other call.
 *
 * @example
 * heldText(call); // 'The outcome of the call to "charge" is unknown (…). A person will check and settle it; do not call "charge" again for this.'
 */
export function heldText(call: ToolCallRecord): string | undefined {
  if (call.status !== 'executing' || call.doubt === undefined) return undefined;
  const tool = `"${call.name || '(no name)'}"`;
  return `The outcome of the call to ${tool} is unknown (${call.doubt.message}). A person will check and settle it; do not call ${tool} again for this.`;
}

/**
 * What the model reads first about a call a person edited before approving: each value they
 * changed, so that the model neither assumes its own input ran nor proposes the original again.
 */
function editText(name: string, edit: InputEdit): string {
  const shown = (value: unknown) =>
    value === undefined ? '(absent)' : (JSON.stringify(value) ?? textOf(value));
  const lines = edit.changes.map(
    (change) => `- ${change.path || '(input)'}: ${shown(change.from)} → ${shown(change.to)}`,
  );
  return `A person (${edit.by}) changed the input of "${name || '(no name)'}" before approving it; it ran with their values, not yours:\n${lines.join('\n')}\nDo not call it again with the original values.`;
}

/**
 * A committed output as text: strings as they are, anything else as JSON.
 *
 * @example
 * outputText({ ok: true }); // '{"ok":true}'
 */
export function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  try {
    // `undefined`, functions and symbols have no JSON; a tool that returns one just "did it".
    return JSON.stringify(output) ?? 'Done.';
  } catch (error) {
    return unsendableText(error);
  }
}

/**
 * What the model reads about a committed output that JSON cannot carry (a BigInt, a cycle): the
 * tool did finish, and why its output cannot be shown.
 *
 * @example
 * unsendableText(new TypeError('Do not know how to serialize a BigInt'));
 * // 'The tool finished, but its output cannot be sent as JSON (Do not know how to serialize a BigInt).'
 */
export function unsendableText(error: unknown): string {
  return `The tool finished, but its output cannot be sent as JSON (${textOf(error)}).`;
}
