/**
 * What a budget's `per` function is asked about: the call (its tool, its validated input), the
 * session and the principal the model acts for.
 *
 * @example
 * const per = (call: BudgetCall) => `${call.principal}:${(call.input as { account: string }).account}`;
 */
export interface BudgetCall {
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
  readonly session: string;
  readonly principal: string;
}

/**
 * A limit on what calls may take in a rolling window, decided in the ledger transaction that
 * starts a call or sends it to a person, so that app servers sharing one database admit exactly
 * what fits. A budget counts the calls it admitted in the last `windowMs` that are waiting for a
 * person, running, committed, or failed after they began to run; each takes `measure(input)`
 * (default 1, so `max` counts calls).
 *
 * - `per`: one budget for each principal, session, tool, or key your function gives.
 * - `over`: `'refuse'` (default) rejects the call with `budget_exceeded`, saying the budget, its
 *   window, what is used and what is left; `'approve'` sends it to a person instead, and the call's
 *   `approval.overBudget` names the budget.
 * - `shadow: true`: refuses nothing; a `budget_exceeded` event in the audit trail says what would
 *   have been refused. Useful to try a budget out on real traffic.
 *
 * A `measure` or `per` that throws or answers anything but a finite number (or a string) refuses
 * the call with `budget_exceeded` and says why (a shadow budget audits it instead).
 *
 * @example
 * const budgets: Budget[] = [
 *   { name: 'transfers_per_day', tools: ['transfer'], per: 'principal', windowMs: 86_400_000, max: 100_00, measure: (input) => (input as { amount_cents: number }).amount_cents },
 *   { name: 'emails_per_hour', tools: ['send_email'], per: 'principal', windowMs: 3_600_000, max: 30 },
 * ];
 * const gate = createServerGate({ tools, ledger, budgets });
 */
export interface Budget {
  /** Names the budget in refusals, approvals and the audit trail; unique among a gate's budgets. */
  readonly name: string;
  /** The tools it applies to (default: every tool). */
  readonly tools?: readonly string[];
  readonly per: 'principal' | 'session' | 'tool' | ((call: BudgetCall) => string);
  /** The rolling window, in milliseconds (a positive number). */
  readonly windowMs: number;
  /** What the calls in one window may take together (0 or more). */
  readonly max: number;
  /** What one call takes (default: 1). */
  readonly measure?: (input: unknown) => number;
  readonly over?: 'refuse' | 'approve';
  readonly shadow?: boolean;
}

const PER = new Set(['principal', 'session', 'tool']);

/**
 * Checks a gate's budgets once, at start: a mistake in one throws a `TypeError` naming the budget
 * and what to change, before any call is decided with it.
 *
 * @example
 * const budgets = checkBudgets(options.budgets);
 */
export function checkBudgets(budgets: unknown): readonly Budget[] {
  if (budgets === undefined) return [];
  if (!Array.isArray(budgets))
    throw new TypeError(
      'createServerGate: `budgets` must be an array of budgets ({ name, per, windowMs, max, ... }).',
    );
  const names = new Set<string>();
  for (const [index, budget] of (budgets as unknown[]).entries()) {
    const problem = problemOf(budget);
    const label =
      typeof (budget as { name?: unknown } | null)?.name === 'string'
        ? `"${(budget as { name: string }).name}"`
        : `#${index}`;
    if (problem !== undefined) throw new TypeError(`createServerGate: budget ${label}: ${problem}.`);
    const { name } = budget as Budget;
    if (names.has(name))
      throw new TypeError(
        `createServerGate: two budgets are named "${name}"; each budget needs a name of its own.`,
      );
    names.add(name);
  }
  return Object.freeze([...(budgets as Budget[])]);
}

function problemOf(budget: unknown): string | undefined {
  if (typeof budget !== 'object' || budget === null)
    return 'a budget is an object { name, per, windowMs, max, ... }';
  const { name, tools, per, windowMs, max, measure, over, shadow } = budget as Record<string, unknown>;
  if (typeof name !== 'string' || name.trim() === '') return '`name` must be a non-empty string';
  if (tools !== undefined && !(Array.isArray(tools) && tools.every((tool) => typeof tool === 'string')))
    return '`tools` must be an array of tool names';
  if (!(typeof per === 'function' || (typeof per === 'string' && PER.has(per))))
    return "`per` must be 'principal', 'session', 'tool' or a function of the call that answers a key";
  if (!(typeof windowMs === 'number' && Number.isFinite(windowMs) && windowMs > 0))
    return `\`windowMs\` must be a positive number of milliseconds (got ${String(windowMs)})`;
  if (!(typeof max === 'number' && Number.isFinite(max) && max >= 0))
    return `\`max\` must be a finite number of 0 or more (got ${String(max)})`;
  if (measure !== undefined && typeof measure !== 'function')
    return '`measure` must be a function of the input that answers a number';
  if (over !== undefined && over !== 'refuse' && over !== 'approve')
    return "`over` must be 'refuse' or 'approve'";
  if (shadow !== undefined && typeof shadow !== 'boolean') return '`shadow` must be true or false';
  return undefined;
}

const UNITS = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1000, 'second'],
] as const;

/**
 * A window as a person reads it: "24 hours", "1 day", "90 seconds".
 *
 * @example
 * windowText(86_400_000); // '1 day'
 */
export function windowText(ms: number): string {
  for (const [size, unit] of UNITS) {
    if (ms % size === 0) {
      const count = ms / size;
      return `${count} ${unit}${count === 1 ? '' : 's'}`;
    }
  }
  return `${ms} ms`;
}
