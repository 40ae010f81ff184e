import { transition } from '@toolgate/core/kit';
import { type ApprovalState, type Clock, type ToolCallRecord } from '@toolgate/core';
import { sql, type Transaction } from 'kysely';
import type { Ledger } from '../ledger/ledger.ts';
import type { LedgerDatabase } from '../ledger/schema.ts';
import { quoted, run, shaped, statement, type Statement } from '../ledger/statements.ts';
import { storeRecord } from '../ledger/stored-record.ts';
import type { Ask } from './approvers.ts';
import { windowText, type Budget, type BudgetCall } from './budget.ts';

type Trx = Transaction<LedgerDatabase>;

/**
 * A call about to start or to wait for a person, as the policy sees it in the transaction that
 * will write that move: `record` is the move the pipeline asked for, `previous` the validated call.
 *
 * @example
 * const verdict = await admit(trx, { record: executing, previous: validated, session: 'chat_1', principal: 'user_42' });
 */
export interface AdmissionCall {
  readonly record: ToolCallRecord;
  readonly previous: ToolCallRecord;
  readonly session: string;
  readonly principal: string;
}

/**
 * What the policy decided: the move to write instead (the same one, a rejection, or a wait for a
 * person), who made it when it is not the proposer's, and what to write once the call's row is in.
 *
 * @example
 * const { record, after } = await admit(trx, call);
 */
export interface Admission {
  readonly record: ToolCallRecord;
  readonly actor?: string;
  readonly after: (trx: Trx) => Promise<void>;
}

/**
 * Decides a call against the budgets (and sets up its quorum) inside a ledger transaction.
 *
 * @example
 * const admit: Admit = createAdmission({ ledger, clock, budgets, approvalsOf: () => 1 });
 */
export type Admit = (trx: Trx, call: AdmissionCall) => Promise<Admission>;

/**
 * What {@link createAdmission} needs: the ledger, the clock, the gate's checked budgets, and how
 * many approvers a call of a tool needs.
 *
 * @example
 * const options: AdmissionOptions = { ledger, clock, budgets, approvalsOf: (name, id) => tools.entry(name, id)?.tool.approvals ?? 1 };
 */
export interface AdmissionOptions {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly budgets: readonly Budget[];
  readonly approvalsOf: (name: string, id: string) => number;
}

/**
 * What the keeper asks of the policy: to decide a call as it is first written, and to give back a
 * call's budget shares when it stops counting.
 *
 * @example
 * const policy: Policy = { admit: createAdmission(options), release: (trx, id) => release(trx, id, ledger.dialect) };
 */
export interface Policy {
  readonly admit: Admit;
  readonly release: (trx: Trx, id: string) => Promise<void>;
  /** Who is asked about a call that will wait for a person (its tool's `approvers`); see `createAsking`. */
  readonly ask?: Ask;
  /** Told of each move in its transaction: a call that begins or stops waiting for a person schedules or cancels what follows. */
  readonly watch?: MoveWatch;
}

/**
 * Hears a move of a call inside the transaction that writes it, with the record before it
 * (`undefined` for a call written now).
 *
 * @example
 * const watch: MoveWatch = async (trx, { previous, next }) => { if (next.status === 'awaiting_approval') await schedule(trx, next); };
 */
export type MoveWatch = (
  trx: Trx,
  move: {
    readonly session: string;
    /** The session's owner: who decides a call whose tool names no `approvers`. */
    readonly owner: string;
    readonly previous: ToolCallRecord | undefined;
    readonly next: ToolCallRecord;
  },
) => Promise<void>;

/** The actor of moves and events a budget makes, in the audit trail. */
export const BUDGET_ACTOR = 'toolgate:budget';

interface Measured {
  readonly budget: Budget;
  readonly key: string;
  readonly amount: number;
}

type Measure = Measured | { readonly budget: Budget; readonly why: string };

/**
 * Builds the admission step of a gate.
 *
 * @example
 * const admit = createAdmission(options);
 */
export function createAdmission({ ledger, clock, budgets, approvalsOf }: AdmissionOptions): Admit {
  return async (trx, call) => {
    const { record, previous } = call;
    const required = approvalsOf(record.name, record.id);
    const applicable = applying(budgets, record.name);
    if (applicable.length === 0) return { record: withApproval(record, required, undefined), after: nothing };

    const now = clock.now();
    const verdict = await judge(
      ledger,
      trx,
      applicable.map((budget) => measure(budget, call, record.input)),
      now,
      { id: record.id, edit: false },
    );
    if ('refusal' in verdict) return refuse(previous, now, verdict.refusal);

    let next = record;
    if (verdict.toPerson !== undefined && record.status === 'executing')
      next = transition(previous, { type: 'await_approval' }, now) ?? record;
    next = withApproval(next, required, verdict.toPerson);
    const after = async (inner: Trx) => {
      await verdict.write(inner, record.id);
      await noteShadow(
        ledger,
        inner,
        { id: record.id, session: call.session, record: next },
        verdict.notes,
        now,
      );
    };
    return { record: next, ...(next === record ? {} : { actor: BUDGET_ACTOR }), after };
  };
}

/**
 * Decides a person's edit of a waiting call against the budgets, in the transaction that approves
 * it: what the call takes is measured again on the edited input, beside everything else the
 * budget counts. Answers why the edit does not fit, or writes the call's new share (and audits a
 * shadow budget's verdict) and answers `undefined`.
 *
 * @example
 * const problem = await readmit(ledger, trx, { budgets, clock }, { record, session, principal: owner }, edited);
 */
export async function readmit(
  ledger: Ledger,
  trx: Trx,
  { budgets, clock }: { readonly budgets: readonly Budget[]; readonly clock: Clock },
  call: Omit<AdmissionCall, 'previous'>,
  input: unknown,
): Promise<string | undefined> {
  const applicable = applying(budgets, call.record.name);
  if (applicable.length === 0) return undefined;
  const now = clock.now();
  const verdict = await judge(
    ledger,
    trx,
    applicable.map((budget) => measure(budget, call, input)),
    now,
    { id: call.record.id, edit: true },
  );
  if ('refusal' in verdict) return verdict.refusal;
  await release(trx, call.record.id, ledger.dialect);
  await verdict.write(trx, call.record.id);
  await noteShadow(
    ledger,
    trx,
    { id: call.record.id, session: call.session, record: call.record },
    verdict.notes,
    now,
  );
  return undefined;
}

const applying = (budgets: readonly Budget[], name: string) =>
  budgets.filter((budget) => budget.tools === undefined || budget.tools.includes(name));

type Verdict =
  | { readonly refusal: string }
  | {
      readonly toPerson: { readonly budget: string; readonly message: string } | undefined;
      readonly notes: readonly string[];
      readonly write: (trx: Trx, id: string) => Promise<void>;
    };

/** Measures a call against its budgets: refused, sent to a person, or admitted (with what to write). */
async function judge(
  ledger: Ledger,
  trx: Trx,
  measures: readonly Measure[],
  now: number,
  call: { readonly id: string; readonly edit: boolean },
): Promise<Verdict> {
  const failed = measures.find(
    (m): m is Extract<Measure, { why: string }> => 'why' in m && m.budget.shadow !== true,
  );
  if (failed !== undefined)
    return { refusal: `budget "${failed.budget.name}" could not measure this call: ${failed.why}` };
  const measured = measures.filter((m): m is Measured => 'amount' in m);
  const notes: string[] = measures
    .filter((m) => 'why' in m)
    .map(
      (m) => `shadow budget "${m.budget.name}" could not measure this call: ${(m as { why: string }).why}`,
    );
  if (measured.length > 0 && !call.edit && (await admitAtOnce(ledger, trx, measured, now, call.id)))
    return { toPerson: undefined, notes, write: nothing };
  const used = await usedNow(ledger, trx, measured, now, call.edit ? call.id : undefined);
  let toPerson: { budget: string; message: string } | undefined;
  for (const m of measured) {
    const spent = used.get(slot(m.budget.name, m.key)) ?? 0;
    if (spent + m.amount <= m.budget.max) continue;
    const message = overText(m, spent);
    if (m.budget.shadow === true) notes.push(`shadow budget would have refused this call: ${message}`);
    else if (m.budget.over === 'approve') toPerson ??= { budget: m.budget.name, message };
    else return { refusal: message };
  }
  const write = async (inner: Trx, id: string) => {
    if (measured.length === 0) return;
    const uses = measured.map((m) => ({
      call_id: id,
      budget: m.budget.name,
      key: m.key,
      amount: m.amount,
      at: now,
    }));
    // One round trip on PostgreSQL (a data-modifying WITH); SQLite runs in this process.
    // The keys' rows are locked already (usedNow locked them in order).
    await addToTotals(inner, ledger.dialect, { uses });
  };
  return { toPerson, notes, write };
}

/**
 * The common case in one statement: the call's shares are added to its keys' totals (locking them)
 * and written as uses; when every total still fits its budget, the call is admitted. The totals
 * may still hold uses that have left their windows, which only overcounts: what fits with them
 * fits without. Otherwise (a key over or near its budget, a key seen for the first time, or uses
 * a whole window past their window), what was written is taken back and the call is decided
 * exactly, the stale uses expired first.
 */
async function admitAtOnce(
  ledger: Ledger,
  trx: Trx,
  measured: readonly Measured[],
  now: number,
  id: string,
): Promise<boolean> {
  const slots = new Map<string, Measured>();
  for (const m of measured) slots.set(slot(m.budget.name, m.key), m);
  const uses = [...slots.values()].map((m) => ({
    call_id: id,
    budget: m.budget.name,
    key: m.key,
    amount: m.amount,
    at: now,
  }));
  const rows = await addToTotals(trx, ledger.dialect, { uses }, { sorted: ledger.dialect === 'postgres' });
  let fits = rows.length === slots.size;
  for (const row of rows) {
    const m = slots.get(slot(row.budget, row.key));
    if (m === undefined) continue;
    if (Number(row.amount) > m.budget.max) fits = false;
    if (row.oldest !== null && Number(row.oldest) <= now - 2 * m.budget.windowMs) fits = false;
  }
  if (fits) return true;
  await trx.deleteFrom('toolgate_budget_uses').where('call_id', '=', id).execute();
  await addToTotals(trx, ledger.dialect, {
    shares: rows.map((row) => ({
      budget: row.budget,
      key: row.key,
      amount: -(slots.get(slot(row.budget, row.key))?.amount ?? 0),
    })),
  });
  return false;
}

/** Audits what a shadow budget would have done, as events that change nothing. */
async function noteShadow(
  ledger: Ledger,
  trx: Trx,
  call: { id: string; session: string; record: ToolCallRecord },
  notes: readonly string[],
  now: number,
): Promise<void> {
  if (notes.length === 0) return;
  const stored = storeRecord(call.record);
  const { status } = call.record;
  await ledger.recordEvents(
    trx,
    notes.map((message) => ({
      callId: call.id,
      session: call.session,
      from: status,
      to: status,
      actor: BUDGET_ACTOR,
      at: now,
      reason: { code: 'budget_exceeded', message },
      record: stored,
    })),
  );
}

const nothing = (): Promise<void> => Promise.resolve();

function refuse(previous: ToolCallRecord, now: number, message: string): Admission {
  const next = transition(previous, { type: 'reject', reason: { code: 'budget_exceeded', message } }, now);
  if (next === undefined)
    throw new Error(`a budget could not refuse call "${previous.id}" from ${previous.status}`);
  return { record: next, actor: BUDGET_ACTOR, after: nothing };
}

/** A call waiting for a person carries who must still approve it, when more than one must or a budget sent it. */
function withApproval(
  record: ToolCallRecord,
  required: number,
  overBudget: ApprovalState['overBudget'],
): ToolCallRecord {
  if (record.status !== 'awaiting_approval' || (required <= 1 && overBudget === undefined)) return record;
  const approval: ApprovalState = {
    required,
    approvedBy: [],
    left: required,
    ...(overBudget === undefined ? {} : { overBudget }),
  };
  return Object.freeze({ ...record, approval });
}

function measure(budget: Budget, call: Omit<AdmissionCall, 'previous'>, input: unknown): Measure {
  const { record, session, principal } = call;
  let key: unknown;
  let amount: unknown = 1;
  try {
    if (budget.per === 'principal') key = principal;
    else if (budget.per === 'session') key = session;
    else if (budget.per === 'tool') key = record.name;
    else
      key = budget.per({ id: record.id, name: record.name, input, session, principal } satisfies BudgetCall);
  } catch (error) {
    return { budget, why: `its \`per\` threw: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof key !== 'string')
    return { budget, why: `its \`per\` answered ${describe(key)}, not a string key` };
  if (budget.measure !== undefined) {
    try {
      amount = budget.measure(input);
    } catch (error) {
      return {
        budget,
        why: `its \`measure\` threw: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0)
    return { budget, why: `its \`measure\` answered ${describe(amount)}, not a finite number of 0 or more` };
  return { budget, key, amount };
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object' && value !== null)
    return typeof (value as { then?: unknown }).then === 'function' ? 'a promise' : 'an object';
  return String(value);
}

function slot(budget: string, key: string): string {
  return JSON.stringify([budget, key]);
}

/**
 * What each budget key has in use now, its total locked first (in one order, so that two
 * transactions never wait for each other): a second app server deciding a call under the same key
 * waits here, then counts this one. Uses that have left their window leave the total on the way.
 * With `except`, that call's own share is left out (an edit is measured again). SQLite's write
 * transactions run one at a time already.
 */
async function usedNow(
  ledger: Ledger,
  trx: Trx,
  measured: readonly Measured[],
  now: number,
  except: string | undefined,
): Promise<Map<string, number>> {
  const used = new Map<string, number>();
  const slots = new Map<string, Measured>();
  for (const m of measured) slots.set(slot(m.budget.name, m.key), m);
  if (slots.size === 0) return used;
  const all = [...slots.values()];
  let totals = await lockTotals(ledger, trx, all);
  if (totals.size < slots.size) {
    await trx
      .insertInto('toolgate_budget_totals')
      .values(
        all
          .filter((m) => !totals.has(slot(m.budget.name, m.key)))
          .map((m) => ({ budget: m.budget.name, key: m.key, amount: 0, oldest: null })),
      )
      .onConflict((conflict) => conflict.columns(['budget', 'key']).doNothing())
      .execute();
    totals = await lockTotals(ledger, trx, all);
  }
  for (const [at, m] of slots) {
    const total = totals.get(at);
    const cutoff = now - m.budget.windowMs;
    if (total === undefined || total.oldest === null || total.oldest > cutoff) continue;
    total.amount = await expire(trx, m, cutoff, total.amount);
  }
  const mine = new Map<string, number>();
  if (except !== undefined) {
    for (const row of await trx
      .selectFrom('toolgate_budget_uses')
      .select(['budget', 'key', 'amount'])
      .where('call_id', '=', except)
      .execute())
      mine.set(slot(row.budget, row.key), Number(row.amount));
  }
  for (const at of slots.keys())
    used.set(at, Math.max(0, (totals.get(at)?.amount ?? 0) - (mine.get(at) ?? 0)));
  return used;
}

/** Takes the uses that left a key's window out of its total (each once); answers the total left. */
async function expire(trx: Trx, { budget, key }: Measured, cutoff: number, total: number): Promise<number> {
  const base = trx
    .selectFrom('toolgate_budget_uses')
    .where('budget', '=', budget.name)
    .where('key', '=', key);
  const gone = await base
    .select(sql<number | null>`sum(amount)`.as('amount'))
    .where('at', '<=', cutoff)
    .executeTakeFirst();
  const left = Math.max(0, total - Number(gone?.amount ?? 0));
  await trx
    .deleteFrom('toolgate_budget_uses')
    .where('budget', '=', budget.name)
    .where('key', '=', key)
    .where('at', '<=', cutoff)
    .execute();
  const oldest = await base.select(sql<number | null>`min(at)`.as('at')).executeTakeFirst();
  await trx
    .updateTable('toolgate_budget_totals')
    .set({ amount: left, oldest: oldest?.at === null || oldest?.at === undefined ? null : Number(oldest.at) })
    .where('budget', '=', budget.name)
    .where('key', '=', key)
    .execute();
  return left;
}

/**
 * The budget keys' totals, locked on PostgreSQL for the rest of the transaction in one order (so
 * two transactions never wait for each other); keys without a total yet are missing.
 */
async function lockTotals(
  ledger: Ledger,
  trx: Trx,
  all: readonly Measured[],
): Promise<Map<string, { amount: number; oldest: number | null }>> {
  let query = trx
    .selectFrom('toolgate_budget_totals')
    .select(['budget', 'key', 'amount', 'oldest'])
    .where((eb) => eb.or(all.map((m) => eb.and([eb('budget', '=', m.budget.name), eb('key', '=', m.key)]))))
    .orderBy('budget')
    .orderBy('key');
  if (ledger.dialect === 'postgres') query = query.forUpdate();
  const totals = new Map<string, { amount: number; oldest: number | null }>();
  for (const row of await query.execute())
    totals.set(slot(row.budget, row.key), {
      amount: Number(row.amount),
      oldest: row.oldest === null ? null : Number(row.oldest),
    });
  return totals;
}

/**
 * Takes a call's shares out of its budgets: it stopped counting (denied, cancelled, expired while
 * waiting, or cancelled while running), in the transaction that moves it, before its event.
 *
 * @example
 * await release(trx, 'call_1', ledger.dialect);
 */
export async function release(trx: Trx, id: string, dialect: Ledger['dialect']): Promise<void> {
  const rows = await trx
    .selectFrom('toolgate_budget_uses')
    .select(['budget', 'key', 'amount'])
    .where('call_id', '=', id)
    .execute();
  if (rows.length === 0) return;
  await addToTotals(
    trx,
    dialect,
    { shares: rows.map((row) => ({ budget: row.budget, key: row.key, amount: -Number(row.amount) })) },
    { sorted: dialect === 'postgres' },
  );
  await trx.deleteFrom('toolgate_budget_uses').where('call_id', '=', id).execute();
}

/**
 * Adds to the keys' totals, in one statement: a call's `uses` (made at one time, written as its
 * use rows too, and that time becomes a total's `oldest` when older), or bare `shares` (a call
 * giving back what it held). With `sorted` (PostgreSQL, where the rows are not locked yet and there
 * are several), the statement first locks the rows in (budget, key) order, as everything else that
 * locks them does: an update takes its rows in the order a scan meets them, which is the order they
 * lie in on disk, and two transactions that took the same keys in two orders could each wait for
 * the other.
 */
async function addToTotals(
  trx: Trx,
  dialect: Ledger['dialect'],
  change: { readonly uses: readonly Use[] } | { readonly shares: readonly Share[] },
  { sorted = false }: { readonly sorted?: boolean } = {},
): Promise<{ budget: string; key: string; amount: number; oldest: number | null }[]> {
  const uses = 'uses' in change ? change.uses : [];
  const shares: readonly Share[] = 'uses' in change ? change.uses : change.shares;
  const at = uses[0]?.at;
  // SQLite runs in this process: the uses are a statement of their own there.
  if (dialect === 'sqlite' && uses.length > 0)
    await run(
      trx,
      dialect,
      shaped(useInserts, uses.length, () => statement(insertUses(uses.length))),
      valuesOfUses(uses),
    );
  if (shares.length === 0) return [];
  const withUses = dialect === 'postgres' ? uses.length : 0;
  const lockSorted = sorted && shares.length > 1;
  const text = shaped(totalsUpdates, `${shares.length}:${at !== undefined}:${lockSorted}:${withUses}`, () =>
    statement(totalsUpdate(shares.length, at !== undefined, lockSorted, withUses)),
  );
  const values: unknown[] = withUses > 0 ? valuesOfUses(uses) : [];
  for (const share of shares) values.push(share.budget, share.key, share.amount);
  if (at !== undefined) values.push(at, at);
  for (const share of shares) values.push(share.budget, share.key);
  if (lockSorted) for (const share of shares) values.push(share.budget, share.key);
  return (
    await run<{ budget: string; key: string; amount: number; oldest: number | null }>(
      trx,
      dialect,
      text,
      values,
    )
  ).rows;
}

/** An amount to add to a key's total (negative to give it back). */
interface Share {
  readonly budget: string;
  readonly key: string;
  readonly amount: number;
}

/** A budget use as its row holds it. */
interface Use {
  readonly call_id: string;
  readonly budget: string;
  readonly key: string;
  readonly amount: number;
  readonly at: number;
}

const USE_COLUMNS = ['call_id', 'budget', 'key', 'amount', 'at'] as const;
const useInserts = new Map<number, Statement>();
const totalsUpdates = new Map<string, Statement>();

const insertUses = (count: number) =>
  `insert into "toolgate_budget_uses" (${quoted(USE_COLUMNS)}) values ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?)').join(', ')}`;
const valuesOfUses = (uses: readonly Use[]) =>
  uses.flatMap((use) => USE_COLUMNS.map((column) => use[column]));

/**
 * The text of {@link addToTotals}' one statement: written out once per shape, since a call's
 * admission runs it every time and Kysely would build and compile it anew each time. On
 * PostgreSQL the uses are written in the same statement, by a data-modifying WITH. A condition on
 * nothing but a subquery is decided once, before the scan begins: with `lockSorted` the rows are
 * locked in order before the update meets any of them.
 */
function totalsUpdate(count: number, withAt: boolean, lockSorted: boolean, uses: number): string {
  const each = (part: string, joiner: string) => Array.from({ length: count }, () => part).join(joiner);
  const matching = each('(budget = ? and key = ?)', ' or ');
  return [
    uses > 0 ? `with "added" as (${insertUses(uses)})` : '',
    `update "toolgate_budget_totals" set "amount" = amount + (case ${each('when budget = ? and key = ? then ?', ' ')} else 0 end)`,
    withAt ? `, "oldest" = (case when oldest is null or oldest > ? then ? else oldest end)` : '',
    `where (${matching})`,
    lockSorted
      ? `and (select count(*) from (select 1 from toolgate_budget_totals where ${matching} order by budget, key for update) as sorted) >= 0`
      : '',
    'returning "budget", "key", "amount", "oldest"',
  ]
    .filter((part) => part !== '')
    .join(' ');
}

function overText({ budget, key, amount }: Measured, spent: number): string {
  const left = Math.max(0, budget.max - spent);
  const per = typeof budget.per === 'string' ? ` for this ${budget.per}` : ` for "${key}"`;
  return `budget "${budget.name}" allows ${budget.max} in any ${windowText(budget.windowMs)}${per}; ${spent} is used and ${left} is left, and this call would take ${amount}`;
}
