import { canonicalJson, copyValue, messageOf, type ToolEntry } from '@toolgate/core/kit';
import { type InputChange, type Issue, type Limits, type ToolCallRecord } from '@toolgate/core';

/**
 * A person's edit of a waiting call, as sent with an approval: the input they want to run and,
 * when the client names one, the tool they think they approve.
 *
 * @example
 * const asked: EditRequest = { input: { to: 'bob', amount_cents: 2000 } };
 */
export interface EditRequest {
  readonly input: unknown;
  readonly name?: unknown;
}

/**
 * An edit checked as a proposal would be: the input the tool's schema answered (what runs), the
 * model's proposal, and each value that differs from it; or why it is refused.
 *
 * @example
 * const checked = await checkEdit(entry, call, { input }, limits);
 * if (!checked.ok) return refused('invalid_edit', checked.message);
 */
export type CheckedEdit =
  | {
      readonly ok: true;
      readonly input: unknown;
      readonly proposed: unknown;
      readonly changes: readonly InputChange[];
    }
  | { readonly ok: false; readonly message: string; readonly issues?: readonly Issue[] };

/**
 * Checks an edit before any transaction: the tool stays the same, it changes only values the model
 * proposed (a field it adds is refused), it passes the tool's schema and the app's `authorize`.
 * Budgets and approvals are decided afterwards, in the transaction that approves it. App code
 * that throws or answers anything but a clear yes refuses the edit.
 *
 * @example
 * const checked = await checkEdit(entry, record, { input: edited }, limits);
 */
export async function checkEdit(
  entry: ToolEntry | undefined,
  record: ToolCallRecord,
  request: EditRequest,
  limits: Limits,
): Promise<CheckedEdit> {
  if (request.name !== undefined && request.name !== record.name) {
    return {
      ok: false,
      message: `an edit cannot change which tool runs: this call is "${record.name}", the edit names ${typeof request.name === 'string' ? JSON.stringify(request.name) : 'no tool name'}`,
    };
  }
  if (entry === undefined)
    return { ok: false, message: `no tool named "${record.name}" is registered on this gate` };
  const copied = copyValue(request.input, limits);
  if (copied.kind !== 'ok')
    return {
      ok: false,
      message: `the edited input is not a JSON value this gate accepts (${copied.kind}${'path' in copied ? ` at ${String(copied.path)}` : ''})`,
    };
  const proposed = record.edit?.proposed ?? record.input;
  const added = changesBetween(proposed, copied.value).filter(
    (change) => !('from' in change) && isKey(proposed, change.path),
  );
  if (added.length > 0) {
    const paths = added.map((change) => change.path).join(', ');
    return {
      ok: false,
      message: `the edit adds ${paths}, which the model did not propose; an edit may only change the values it proposed`,
      issues: added.map((change) => ({ path: change.path, message: 'not in the proposed input' })),
    };
  }
  let result: unknown;
  try {
    result = await entry.validateInput(copied.value);
  } catch (error) {
    return { ok: false, message: `the tool's schema threw on the edit: ${messageOf(error)}` };
  }
  const verdict = result as { ok?: unknown; value?: unknown; issues?: unknown };
  if (verdict.ok !== true || !('value' in verdict)) {
    const issues = Array.isArray(verdict.issues) ? (verdict.issues as Issue[]) : [];
    const lines = issues.map((issue) => `${issue.path || '(input)'}: ${issue.message}`).join('; ');
    return {
      ok: false,
      message: `the edited input does not fit the tool's schema${lines === '' ? '' : `: ${lines}`}`,
      issues,
    };
  }
  const input = verdict.value;
  const { tool } = entry;
  if (tool.authorize !== undefined) {
    let answer: unknown;
    try {
      answer = await tool.authorize(input, { call: { id: record.id, name: record.name }, state: undefined });
    } catch (error) {
      return { ok: false, message: `authorize threw on the edit: ${messageOf(error)}` };
    }
    if (answer !== true)
      return {
        ok: false,
        message: `the app does not authorize the edited call: ${typeof answer === 'string' && answer !== '' ? answer : 'it did not say yes'}`,
      };
  }
  return { ok: true, input, proposed, changes: changesBetween(proposed, input) };
}

/** Whether a change's path ends in an object key (not an array index): only those are fields. */
function isKey(proposed: unknown, path: string): boolean {
  const parts = path
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  let at: unknown = proposed;
  for (const part of parts.slice(0, -1))
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[part] : undefined;
  return !Array.isArray(at);
}

const pointer = (path: string, key: string) => `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;

/**
 * Every value that differs between two JSON values, by JSON Pointer: `from` absent where `after`
 * adds a value, `to` absent where it removes one.
 *
 * @example
 * changesBetween({ amount_cents: 2500, to: 'bob' }, { amount_cents: 2000, to: 'bob' }); // [{ path: '/amount_cents', from: 2500, to: 2000 }]
 */
export function changesBetween(before: unknown, after: unknown, path = ''): InputChange[] {
  const bothObjects = isObject(before) && isObject(after);
  const bothArrays = Array.isArray(before) && Array.isArray(after);
  if (!bothObjects && !bothArrays)
    return canonicalJson(before) === canonicalJson(after) ? [] : [{ path, from: before, to: after }];
  const keys = bothArrays
    ? Array.from(
        { length: Math.max((before as unknown[]).length, (after as unknown[]).length) },
        (_, index) => String(index),
      )
    : [...new Set([...Object.keys(before as object), ...Object.keys(after as object)])];
  const changes: InputChange[] = [];
  for (const key of keys) {
    const has = [Object.hasOwn(before as object, key), Object.hasOwn(after as object, key)];
    const from = (before as Record<string, unknown>)[key];
    const to = (after as Record<string, unknown>)[key];
    if (has[0] === true && has[1] === true) changes.push(...changesBetween(from, to, pointer(path, key)));
    else if (has[1] === true) changes.push({ path: pointer(path, key), to });
    else changes.push({ path: pointer(path, key), from });
  }
  return changes;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
