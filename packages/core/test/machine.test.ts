import { describe, expect, it } from 'vitest';
import { ALLOWED_TRANSITIONS, createPending, transition, type CallEvent } from '../src/kit.ts';
import {
  type CancelledCode,
  type FailedCode,
  type RejectedCode,
  type ToolCallRecord,
  type ToolCallStatus,
} from '../src/index.ts';

const STATUSES: ToolCallStatus[] = [
  'pending',
  'validated',
  'awaiting_approval',
  'executing',
  'committed',
  'cancelled',
  'rejected',
  'failed',
];
const REJECTED: RejectedCode[] = [
  'invalid_json',
  'invalid_shape',
  'unknown_tool',
  'tool_unavailable',
  'invalid_arguments',
  'too_large',
  'too_deep',
  'unauthorized',
  'truncated',
  'id_conflict',
  'budget_exceeded',
];
const CANCELLED: CancelledCode[] = [
  'tool_cancelled',
  'user_cancelled',
  'approval_denied',
  'approval_expired',
  'timeout',
];
const FAILED: FailedCode[] = ['tool_error', 'output_invalid', 'commit_error', 'interrupted'];

function recordIn(status: ToolCallStatus): ToolCallRecord {
  const base = {
    ...createPending({
      id: 'c1',
      name: 'charge',
      source: 'normalised',
      generatedId: false,
      turn: undefined,
      at: 0,
    }),
    history: [{ status, at: 0 }],
    preview: undefined,
  };
  const input = { amount_cents: 1 };
  switch (status) {
    case 'pending':
      return { ...base, status };
    case 'validated':
    case 'awaiting_approval':
    case 'executing':
      return { ...base, status, input };
    case 'committed':
      return { ...base, status, input, output: { ok: true } };
    case 'rejected':
      return { ...base, status, reason: { code: 'invalid_json', message: 'x' } };
    case 'cancelled':
      return { ...base, status, input, reason: { code: 'user_cancelled', message: 'x' } };
    case 'failed':
      return { ...base, status, input, reason: { code: 'tool_error', message: 'x' } };
  }
}

/** Every event the machine knows, with every reason code each can carry. */
function everyEvent(): { event: CallEvent; to: ToolCallStatus; code?: string }[] {
  return [
    { event: { type: 'preview', preview: { a: 1 } }, to: 'pending' },
    { event: { type: 'validate', input: { amount_cents: 1 } }, to: 'validated' },
    { event: { type: 'await_approval' }, to: 'awaiting_approval' },
    { event: { type: 'execute' }, to: 'executing' },
    { event: { type: 'commit', output: { ok: true } }, to: 'committed' },
    ...REJECTED.map((code) => ({
      event: { type: 'reject' as const, reason: { code, message: code } },
      to: 'rejected' as const,
      code,
    })),
    ...CANCELLED.map((code) => ({
      event: { type: 'cancel' as const, reason: { code, message: code } },
      to: 'cancelled' as const,
      code,
    })),
    ...FAILED.map((code) => ({
      event: { type: 'fail' as const, reason: { code, message: code } },
      to: 'failed' as const,
      code,
    })),
  ];
}

/** The allowed moves, written out by hand from the architecture's diagram so that the table is checked, not echoed. */
const EXPECTED = new Set([
  'pending→pending',
  'pending→validated',
  ...[
    'invalid_json',
    'invalid_shape',
    'unknown_tool',
    'tool_unavailable',
    'invalid_arguments',
    'too_large',
    'too_deep',
    'truncated',
  ].map((c) => `pending→rejected:${c}`),
  'pending→cancelled:user_cancelled',
  'validated→awaiting_approval',
  'validated→executing',
  'validated→rejected:unauthorized',
  'validated→rejected:budget_exceeded',
  'validated→cancelled:user_cancelled',
  'awaiting_approval→executing',
  'awaiting_approval→cancelled:approval_denied',
  'awaiting_approval→cancelled:approval_expired',
  'awaiting_approval→cancelled:user_cancelled',
  'executing→committed',
  'executing→cancelled:tool_cancelled',
  'executing→cancelled:user_cancelled',
  'executing→cancelled:timeout',
  'executing→failed:tool_error',
  'executing→failed:output_invalid',
  'executing→failed:commit_error',
  'executing→failed:interrupted',
]);

describe('transition', () => {
  const cases = STATUSES.flatMap((from) =>
    everyEvent().map((e) => ({ from, ...e, key: `${from}→${e.to}${e.code ? ':' + e.code : ''}` })),
  );

  it.each(cases.filter((c) => EXPECTED.has(c.key)).map((c) => [c.key, c] as const))(
    'allows %s',
    (_key, c) => {
      const next = transition(recordIn(c.from), c.event, 42);
      expect(next?.status).toBe(c.to);
      expect(next?.updatedAt).toBe(42);
      if (c.to !== c.from) {
        expect(next?.history.at(-1)).toEqual(
          c.code
            ? { status: c.to, at: 42, reason: { code: c.code, message: c.code } }
            : { status: c.to, at: 42 },
        );
      }
    },
  );

  it.each(cases.filter((c) => !EXPECTED.has(c.key)).map((c) => [c.key, c] as const))(
    'refuses %s',
    (_key, c) => {
      expect(transition(recordIn(c.from), c.event, 42)).toBeUndefined();
    },
  );

  it('lists exactly the expected moves in ALLOWED_TRANSITIONS', () => {
    const listed = Object.entries(ALLOWED_TRANSITIONS).flatMap(([from, edges]) =>
      Object.entries(edges).flatMap(([to, edge]) =>
        edge === true ? [`${from}→${to}`] : edge.map((code) => `${from}→${to}:${code}`),
      ),
    );
    expect(new Set(listed)).toEqual(EXPECTED);
  });

  it('never moves a terminal call', () => {
    for (const status of ['committed', 'cancelled', 'rejected', 'failed'] as const) {
      for (const { event } of everyEvent()) expect(transition(recordIn(status), event, 1)).toBeUndefined();
    }
  });

  it('keeps the input through execution and adds output only on commit', () => {
    const validated = transition(recordIn('pending'), { type: 'validate', input: { a: 1 } }, 1)!;
    const executing = transition(validated, { type: 'execute' }, 2)!;
    const committed = transition(executing, { type: 'commit', output: { ok: true } }, 3)!;
    expect(committed).toMatchObject({ status: 'committed', input: { a: 1 }, output: { ok: true } });
    expect(committed.history.map((h) => h.status)).toEqual([
      'pending',
      'validated',
      'executing',
      'committed',
    ]);
    expect(executing.output).toBeUndefined();
  });

  it('updates a pending preview without adding history', () => {
    const pending = recordIn('pending');
    const next = transition(pending, { type: 'preview', preview: { city: 'Os' } }, 5)!;
    expect(next).toMatchObject({ status: 'pending', preview: { city: 'Os' } });
    expect(next.history).toBe(pending.history);
  });

  it('does not change the record it is given', () => {
    const pending = recordIn('pending');
    const copy = structuredClone(pending);
    transition(pending, { type: 'validate', input: {} }, 1);
    expect(pending).toEqual(copy);
  });
});
