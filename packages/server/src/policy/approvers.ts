import { messageOf, transition } from '@toolgate/core/kit';
import { type ApprovalState, type Clock, type ToolCallRecord, type ToolDefinition } from '@toolgate/core';
import type { Transaction } from 'kysely';
import { storable } from '../ledger/guards/storable.ts';
import type { LedgerDatabase } from '../ledger/schema.ts';

type Trx = Transaction<LedgerDatabase>;

/** The actor of a call refused because nobody could be asked to decide it, in the audit trail. */
export const APPROVERS_ACTOR = 'toolgate:approvers';

/** How long `approvers` may take when its tool sets no `timeoutMs`: it holds the transaction that makes the call wait. */
export const APPROVERS_TIMEOUT_MS = 30_000;

/** More principals than any approval asks of, and a record kept to a size a page can show. */
const MOST_ASKED = 100;

/**
 * What asking needs: each tool's `approvers` and quorum, and whether a requester may approve.
 *
 * @example
 * const ask = createAsking({ toolOf: (name, id) => tools.entry(name, id)?.tool, approvalsOf, selfApproval: 'forbid', clock, inApp: ledger.inApp });
 */
export interface AskingOptions {
  readonly toolOf: (name: string, id: string) => ToolDefinition | undefined;
  readonly approvalsOf: (name: string, id: string) => number;
  readonly selfApproval: 'forbid' | 'allow';
  readonly clock: Clock;
  /** Runs `approvers`, which the transaction awaits, as app code (`Ledger.inApp`). */
  readonly inApp: <T>(code: () => Promise<T>) => Promise<T>;
}

/**
 * A call about to wait for a person, as asking sees it: `record` is the wait the policy would
 * write, `previous` the validated call, `principal` who proposed it.
 *
 * @example
 * const call: AskedCall = { record: waiting, previous: validated, session: 'chat_1', principal: 'agent_7' };
 */
export interface AskedCall {
  readonly record: ToolCallRecord;
  readonly previous: ToolCallRecord;
  readonly session: string;
  readonly principal: string;
}

/**
 * Decides who is asked about a call that is about to wait for a person, in the transaction that
 * writes that wait: the same call, waiting for the principals its tool's `approvers` names (the
 * record's `approval.asked`), or, when nobody could be asked, the call rejected `unauthorized`.
 *
 * @example
 * const { record, actor } = await ask(trx, { record: waiting, previous: validated, session: 'chat_1', principal: 'agent_7' });
 */
export type Ask = (
  trx: Trx,
  call: AskedCall,
) => Promise<{ readonly record: ToolCallRecord; readonly actor?: string }>;

/**
 * Builds the asking step of a gate. A tool without `approvers` keeps its call as it is. An
 * `approvers` that throws, answers anything but a list of principals, or leaves fewer principals
 * than the call needs approvers (once the requester and the person it acts for are taken out,
 * under `selfApproval: 'forbid'`) rejects the call with a reason the model reads: a call never
 * waits for nobody.
 *
 * @example
 * const ask = createAsking(options);
 */
export function createAsking({ toolOf, approvalsOf, selfApproval, clock, inApp }: AskingOptions): Ask {
  return async (trx, call) => {
    const { record, previous, session, principal } = call;
    const tool = toolOf(record.name, record.id);
    if (tool?.approvers === undefined || record.status !== 'awaiting_approval') return { record };
    const { onBehalfOf } = record;
    const refuse = (message: string) => {
      const rejected = transition(
        previous,
        { type: 'reject', reason: { code: 'unauthorized', message } },
        record.updatedAt,
      );
      // Where no rejection fits, the call waits with nobody who may approve it (it can be cancelled).
      if (rejected === undefined) return { record: withAsked(record, [], principal, approvalsOf) };
      return { record: rejected, actor: APPROVERS_ACTOR };
    };
    const ms = tool.timeoutMs ?? APPROVERS_TIMEOUT_MS;
    // A compensation is decided on what it undoes: the input of the committed call.
    const input =
      record.compensates === undefined ? record.input : await undoneInput(trx, record.compensates);
    const answer = await answerOf(
      () =>
        tool.approvers?.({
          id: record.id,
          name: record.name,
          input,
          principal,
          session,
          ...(onBehalfOf === undefined ? {} : { onBehalfOf }),
        }),
      ms,
      clock,
      inApp,
    );
    if (answer === LATE)
      return refuse(`nobody could be asked to approve this call: approvers did not answer within ${ms} ms`);
    if (answer instanceof Threw)
      return refuse(
        `nobody could be asked to approve this call: approvers threw: ${messageOf(answer.error)}`,
      );
    const named = principalsIn(answer);
    if (typeof named === 'string')
      return refuse(`nobody could be asked to approve this call: approvers answered ${named}`);
    const asked =
      selfApproval === 'forbid'
        ? named.filter((asker) => asker !== principal && asker !== onBehalfOf)
        : named;
    const required = approvalsOf(record.name, record.id);
    if (asked.length < required) {
      const who = asked.length === 0 ? 'nobody' : `only ${asked.length}`;
      const besides =
        named.length > asked.length ? ' besides the requester, who may not approve their own call' : '';
      return refuse(
        `this call needs ${required} distinct approver${required === 1 ? '' : 's'}, and approvers named ${who}${besides}`,
      );
    }
    return { record: withAsked(record, asked, principal, approvalsOf) };
  };
}

/**
 * What a function naming principals answered (an escalation's `approvers`), as distinct principals
 * in its order, or why it names nobody: it threw, did not answer within `ms`, or answered
 * something else than a list of principals.
 *
 * @example
 * const named = await namedPrincipals(() => step.approvers(call), 30_000, clock);
 * if (typeof named === 'string') audit(`approvers ${named}`);
 */
export async function namedPrincipals(
  ask: () => unknown,
  ms: number,
  clock: Clock,
): Promise<readonly string[] | string> {
  const answer = await answerOf(ask, ms, clock);
  if (answer === LATE) return `did not answer within ${ms} ms`;
  if (answer instanceof Threw) return `threw: ${messageOf(answer.error)}`;
  const named = principalsIn(answer);
  return typeof named === 'string' ? `answered ${named}` : named;
}

const LATE = Symbol('late');

class Threw {
  constructor(readonly error: unknown) {}
}

/**
 * What `approvers` answered, or that it threw or did not answer in time. Run inside the ledger
 * transaction, it is given `inApp`: what it starts is app code until the answer or the time is up.
 */
async function answerOf(
  ask: () => unknown,
  ms: number,
  clock: Clock,
  inApp: <T>(code: () => Promise<T>) => Promise<T> = (code) => code(),
): Promise<unknown> {
  let timer: unknown;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = clock.setTimeout(() => resolve(LATE), ms);
  });
  try {
    return await inApp(() => Promise.race([Promise.resolve().then(ask), late]));
  } catch (error) {
    return new Threw(error);
  } finally {
    clock.clearTimeout(timer);
  }
}

function withAsked(
  record: ToolCallRecord,
  asked: readonly string[],
  principal: string,
  approvalsOf: AskingOptions['approvalsOf'],
): ToolCallRecord {
  const required = approvalsOf(record.name, record.id);
  const from: ApprovalState['from'] =
    record.onBehalfOf === undefined ? { principal } : { principal, onBehalfOf: record.onBehalfOf };
  const approval: ApprovalState = {
    required,
    approvedBy: [],
    left: required,
    ...(record.approval?.overBudget === undefined ? {} : { overBudget: record.approval.overBudget }),
    asked: Object.freeze([...asked]),
    from,
  };
  return Object.freeze({ ...record, approval });
}

/** The distinct principals of an answer, in its order, or what is wrong with it. */
function principalsIn(answer: unknown): readonly string[] | string {
  if (!Array.isArray(answer)) return `${describe(answer)}, not a list of principals`;
  const principals: string[] = [];
  for (const item of answer as unknown[]) {
    if (typeof item !== 'string' || item === '' || !storable(item))
      return `a list holding ${describe(item)}, which is not a principal`;
    if (!principals.includes(item)) principals.push(item);
  }
  if (principals.length === 0) return 'an empty list';
  if (principals.length > MOST_ASKED) return `${principals.length} principals, more than ${MOST_ASKED}`;
  return principals;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 80));
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'a list' : 'an object';
  return typeof value === 'function' ? 'a function' : (JSON.stringify(value) ?? typeof value);
}

/** The input of the committed call a compensation undoes: what its tool's `approvers` decides on. */
async function undoneInput(trx: Trx, id: string): Promise<unknown> {
  const row = await trx.selectFrom('toolgate_calls').select('input').where('id', '=', id).executeTakeFirst();
  return row?.input == null ? undefined : JSON.parse(row.input);
}
