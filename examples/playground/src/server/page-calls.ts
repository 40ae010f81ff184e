import { createPending } from '@toolgate/core/kit';
import { type Issue, type Reason, type SettledCall, type ToolCallRecord } from '@toolgate/core';

/** A call of a page tool as the server hands it to the page: the page's own gate checks and runs it. */
export interface PageCall {
  readonly id: string;
  readonly name: string;
  /** The arguments exactly as the model sent them. */
  readonly arguments: string;
}

/** What the page reports for a page call it ran: the record its gate settled, as JSON. */
export interface PageReport {
  readonly status?: unknown;
  readonly output?: unknown;
  readonly reason?: unknown;
  readonly input?: unknown;
  /** The call's moves in the page's gate, shown in the audit timeline of a page loaded later. */
  readonly history?: unknown;
}

const CODES: Readonly<Record<string, readonly string[]>> = {
  rejected: [
    'invalid_json',
    'invalid_shape',
    'unknown_tool',
    'invalid_arguments',
    'too_large',
    'too_deep',
    'unauthorized',
    'truncated',
  ],
  cancelled: ['tool_cancelled', 'user_cancelled', 'approval_denied', 'timeout'],
  failed: ['tool_error', 'output_invalid', 'commit_error'],
};

/**
 * The answers the page owes for its tools' calls. The server's loop waits here for each call it
 * handed to the page; the page posts what its gate settled. Only the first answer for a call
 * counts, and only for a call this registry is waiting for.
 */
export interface PageResults {
  /** Resolves with the call's settled record once the page (or `settle`) answers it. */
  readonly wait: (call: { readonly id: string; readonly name: string }) => Promise<SettledCall>;
  /** The page's answer; `false` when no one waits for this call (unknown, or already answered). */
  readonly answer: (id: string, report: PageReport) => boolean;
  /** Ends a call here without the page (the visitor stopped the chat, the stream broke off). */
  readonly settle: (record: SettledCall) => void;
  readonly waiting: (id: string) => boolean;
}

export function createPageResults(): PageResults {
  const open = new Map<
    string,
    {
      readonly name: string;
      readonly resolve: (call: SettledCall) => void;
      readonly promise: Promise<SettledCall>;
    }
  >();
  return {
    wait({ id, name }) {
      const known = open.get(id);
      if (known !== undefined) return known.promise;
      let resolve!: (call: SettledCall) => void;
      const promise = new Promise<SettledCall>((done) => (resolve = done));
      open.set(id, { name, resolve, promise });
      return promise;
    },
    answer(id, report) {
      const waiting = open.get(id);
      if (waiting === undefined) return false;
      open.delete(id);
      waiting.resolve(settledFrom(id, waiting.name, report));
      return true;
    },
    settle(record) {
      const waiting = open.get(record.id);
      if (waiting === undefined) return;
      open.delete(record.id);
      waiting.resolve(record);
    },
    waiting: (id) => open.has(id),
  };
}

/**
 * The record the model is answered from, rebuilt from what the page sent: only a terminal status,
 * a reason code that status can have, and plain text, so that nothing the page sends can make the
 * answer say something the gate would not.
 */
export function settledFrom(id: string, name: string, report: PageReport): SettledCall {
  const now = Date.now();
  const base = createPending({
    id,
    name,
    source: 'openai-chat',
    generatedId: false,
    turn: undefined,
    at: now,
  });
  const status = typeof report.status === 'string' ? report.status : '';
  if (status === 'committed') {
    const output = report.output === undefined ? null : report.output;
    return withHistory(
      {
        ...base,
        status: 'committed',
        input: report.input ?? {},
        output,
        history: [...base.history, { status: 'committed', at: now }],
      } as SettledCall,
      report.history,
    );
  }
  const reason = readReason(status, report.reason);
  const settled = reason === undefined ? 'failed' : status;
  const why: Reason = reason ?? {
    code: 'tool_error',
    message: 'the page answered with a result that could not be read',
  };
  return withHistory(
    {
      ...base,
      status: settled,
      reason: why,
      history: [...base.history, { status: settled, at: now, reason: why }],
    } as SettledCall,
    report.history,
  );
}

const OPEN = new Set(['pending', 'validated', 'awaiting_approval', 'executing']);

/**
 * The record with the moves the page reported, when they read as a call's history that ends where
 * the record does: from `pending`, through open statuses only, in time order. Only the last move
 * keeps a reason (the record's, already checked); the model is never told any of it.
 */
function withHistory(record: SettledCall, reported: unknown): SettledCall {
  if (!Array.isArray(reported) || reported.length < 2 || reported.length > 16) return record;
  const steps = reported.map((step: unknown) => {
    const { status, at } = (typeof step === 'object' && step !== null ? step : {}) as Record<string, unknown>;
    return typeof status === 'string' && typeof at === 'number' && Number.isFinite(at)
      ? { status, at }
      : undefined;
  });
  const last = steps.at(-1);
  const readable =
    steps[0]?.status === 'pending' &&
    last?.status === record.status &&
    steps.every(
      (step, index) =>
        step !== undefined &&
        (index === steps.length - 1 || OPEN.has(step.status)) &&
        (index === 0 || step.at >= (steps[index - 1]?.at ?? Infinity)),
    );
  if (!readable) return record;
  const history = (steps as { status: string; at: number }[]).map((step, index) =>
    index === steps.length - 1 && record.reason !== undefined ? { ...step, reason: record.reason } : step,
  );
  return {
    ...record,
    createdAt: history[0]?.at ?? record.createdAt,
    updatedAt: last.at,
    history,
  } as SettledCall;
}

function readReason(status: string, value: unknown): Reason | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { code, message, issues } = value as Record<string, unknown>;
  if (typeof code !== 'string' || !(CODES[status] ?? []).includes(code) || typeof message !== 'string')
    return undefined;
  const read: Issue[] = Array.isArray(issues)
    ? issues.flatMap((issue: unknown) => {
        if (typeof issue !== 'object' || issue === null) return [];
        const { path, message: said } = issue as Record<string, unknown>;
        return typeof path === 'string' && typeof said === 'string'
          ? [{ path: path.slice(0, 500), message: said.slice(0, 500) }]
          : [];
      })
    : [];
  return { code, message: message.slice(0, 2000), ...(read.length > 0 ? { issues: read } : {}) } as Reason;
}

/** A page call that never reached the page: its record, settled here. */
export function endedHere(
  call: ToolCallRecord,
  status: 'cancelled' | 'rejected',
  reason: Reason,
): SettledCall {
  const now = Date.now();
  return {
    ...call,
    status,
    reason,
    preview: undefined,
    updatedAt: now,
    history: [...call.history, { status, at: now, reason }],
  } as SettledCall;
}
