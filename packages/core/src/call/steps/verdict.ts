import { afterWith } from '../maybe-promise.ts';
import type { Issue } from '../../record/record.ts';
import { messageOf, textOf } from '../../record/text.ts';
import type { Validate, ValidationResult } from '../../schema/schema.ts';

/**
 * Runs a check that may be async (a thenable of any realm is awaited). A validator that throws,
 * rejects or answers anything but a well-formed result refuses the value, with issues that say so.
 *
 * @example
 * check(entry.validateInput, value, (result) => (result.ok ? accept(result.value) : refuse(result.issues)));
 */
export function check(validate: Validate, value: unknown, then: (result: ValidationResult) => void): void {
  let result: unknown;
  try {
    result = validate(value);
  } catch (error) {
    then(thrownIssue(error));
    return;
  }
  afterWith(then, result, answered, thrown);
}

function answered(then: (result: ValidationResult) => void, answer: unknown): void {
  then(verdictOf(answer));
}

function thrown(then: (result: ValidationResult) => void, error: unknown): void {
  then(thrownIssue(error));
}

function thrownIssue(error: unknown): ValidationResult {
  return { ok: false, issues: [{ path: '', message: `the validator threw: ${messageOf(error)}` }] };
}

/**
 * A validator's answer, trusted only when it is well formed: `{ ok: true, value }` is a success,
 * `{ ok: false, issues: [...] }` a failure; anything else (a custom JSON Schema compiler's `ok: 'yes'`,
 * `{ ok: true }` without a value, `null`) is a failure that says what the validator answered.
 */
function verdictOf(answer: unknown): ValidationResult {
  try {
    if (typeof answer === 'object' && answer !== null) {
      const { ok } = answer as { ok?: unknown };
      if (ok === true && 'value' in answer) return { ok: true, value: answer.value };
      const issues: unknown = ok === false ? (answer as { issues?: unknown }).issues : undefined;
      if (Array.isArray(issues) && issues.length > 0) return { ok: false, issues: issues.map(issueOf) };
      if (Array.isArray(issues)) return refusedIssue('the validator refused the value without saying why');
    }
    return refusedIssue('the validator answered neither { ok: true, value } nor { ok: false, issues }');
  } catch (error) {
    return thrownIssue(error);
  }
}

function issueOf(issue: unknown): Issue {
  const { path, message, keyword } = (typeof issue === 'object' && issue !== null ? issue : {}) as Partial<
    Record<keyof Issue, unknown>
  >;
  const base = {
    path: typeof path === 'string' ? path : '',
    message: typeof message === 'string' ? message : textOf(message),
  };
  return typeof keyword === 'string' ? { ...base, keyword } : base;
}

function refusedIssue(message: string): ValidationResult {
  return { ok: false, issues: [{ path: '', message }] };
}
