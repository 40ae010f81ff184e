import { describe, expect, it } from 'vitest';
import { createPending, idempotencyKeyOf, outcomeText, transition } from '../src/kit.ts';
import {
  createToolGate,
  defineTool,
  heldText,
  notExecuted,
  type Reconciliation,
  type SettledCall,
  type ToolCallRecord,
} from '../src/index.ts';
import { isNotExecuted, NotExecutedError } from '../src/tool/not-executed.ts';
import { readReconciliation } from '../src/tool/reconcile.ts';
import { readRecord } from '../src/remote/wire.ts';
import { createFakeClock } from '@toolgate/test-utils';

// Outcomes nobody saw, in core: what a tool author declares, what the machine allows a call in
// doubt, how the browser gate's pipeline asks reconcile, and what the model and the page read.

const input = {
  type: 'object',
  properties: { order: { type: 'string' } },
  required: ['order'],
  additionalProperties: false,
} as const;

describe('defineTool: the options about outcomes', () => {
  it('refuses options that cannot work, with a message that says what to do', () => {
    const base = { name: 'pay', inputSchema: input, execute: () => 'ok' };
    expect(() => defineTool({ ...base, reconcile: 'yes' as never })).toThrow(
      '`reconcile` must be a function',
    );
    expect(() => defineTool({ ...base, idempotencyKey: 'k' as never })).toThrow(
      '`idempotencyKey` must be a function',
    );
    expect(() => defineTool({ ...base, compensate: {} as never })).toThrow('`compensate` must be a function');
    expect(() => defineTool({ ...base, onUnknown: 'retry' as never })).toThrow(
      "`onUnknown` must be 'interrupt' or 'hold'",
    );
    expect(() => defineTool({ ...base, transactional: true, onUnknown: 'hold' })).toThrow(
      "a transactional tool's writes commit with its call or not at all",
    );
  });

  it('names the effect by the tool, else by the call id; a key it cannot make is an error naming the tool', () => {
    const call = { id: 'call_1', name: 'pay' };
    const config = { name: 'pay', inputSchema: input, execute: () => 'ok' } as const;
    const plain = defineTool(config);
    expect(idempotencyKeyOf(plain, { order: 'o_1' }, call)).toBe('call_1');
    const named = defineTool({ ...config, idempotencyKey: ({ order }) => `pay:${order}` });
    expect(idempotencyKeyOf(named, { order: 'o_1' }, call)).toBe('pay:o_1');
    const empty = defineTool({ ...config, idempotencyKey: () => '' });
    expect(() => idempotencyKeyOf(empty, { order: 'o_1' }, call)).toThrow(
      'the idempotencyKey of "pay" answered ""',
    );
  });
});

describe('notExecuted', () => {
  it('marks an error as "nothing happened", keeping what was caught as its cause', () => {
    const caught = new Error('402 card declined');
    const marked = notExecuted(caught);
    expect(marked).toBeInstanceOf(NotExecutedError);
    expect(marked).toMatchObject({ name: 'NotExecutedError', message: '402 card declined', cause: caught });
    expect(notExecuted(marked)).toBe(marked);
    expect(isNotExecuted(marked)).toBe(true);
    expect(isNotExecuted(new Error('socket hang up'))).toBe(false);
    expect(isNotExecuted({ [Symbol.for('toolgate.notExecuted')]: true })).toBe(true);
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(isNotExecuted(revoked.proxy)).toBe(false);
  });
});

describe('readReconciliation: a reconcile is trusted only in one of its three shapes', () => {
  it.each([
    [
      { outcome: 'committed', output: { id: 1 } },
      { outcome: 'committed', output: { id: 1 } },
    ],
    [{ outcome: 'not_executed' }, { outcome: 'not_executed' }],
    [{ outcome: 'unknown' }, { outcome: 'unknown', problem: 'reconcile could not tell (unknown)' }],
    [
      { outcome: 'committed' },
      { outcome: 'unknown', problem: 'reconcile answered committed without the output it found' },
    ],
    [{ outcome: 'done' }, { outcome: 'unknown', problem: 'reconcile answered an unknown outcome "done"' }],
    [null, { outcome: 'unknown', problem: 'reconcile answered null, not { outcome }' }],
    [['committed'], { outcome: 'unknown', problem: 'reconcile answered an array, not { outcome }' }],
    [
      Object.create({ outcome: 'not_executed' }),
      { outcome: 'unknown', problem: 'reconcile answered an unknown outcome undefined' },
    ],
  ])('%j', (answer, read) => {
    expect(readReconciliation(answer)).toEqual(read);
  });

  it('reads a throwing getter as unknown', () => {
    const hostile = Object.defineProperty({}, 'outcome', {
      enumerable: true,
      get() {
        throw new Error('nope');
      },
    });
    expect(readReconciliation(hostile)).toEqual({
      outcome: 'unknown',
      problem: "reconcile's answer could not be read: nope",
    });
  });
});

function executing(): ToolCallRecord {
  let call: ToolCallRecord = createPending({
    id: 'c1',
    name: 'pay',
    source: 'normalised',
    generatedId: false,
    turn: undefined,
    at: 0,
  });
  for (const event of [{ type: 'validate', input: { order: 'o_1' } }, { type: 'execute' }] as const)
    call = transition(call, event, 1) as ToolCallRecord;
  return call;
}

describe('the machine: a running call in doubt', () => {
  it('holds a running call, and then takes only a commit or a run again', () => {
    const held = transition(executing(), { type: 'doubt', message: 'the connection was cut' }, 5);
    expect(held).toMatchObject({ status: 'executing', doubt: { at: 5, message: 'the connection was cut' } });
    expect(held?.history.map((step) => step.status)).toEqual(['pending', 'validated', 'executing']);
    const call = held as ToolCallRecord;
    expect(
      transition(call, { type: 'cancel', reason: { code: 'user_cancelled', message: 'x' } }, 6),
    ).toBeUndefined();
    expect(
      transition(call, { type: 'cancel', reason: { code: 'timeout', message: 'x' } }, 6),
    ).toBeUndefined();
    expect(
      transition(call, { type: 'fail', reason: { code: 'interrupted', message: 'x' } }, 6),
    ).toBeUndefined();
    expect(transition(call, { type: 'doubt', message: 'again' }, 6)).toBeUndefined();
    const committed = transition(
      call,
      { type: 'commit', output: 1, evidence: { source: 'person', by: 'ops_1', note: 'seen' } },
      7,
    );
    expect(committed).toMatchObject({
      status: 'committed',
      output: 1,
      evidence: { source: 'person', by: 'ops_1', note: 'seen', at: 7 },
    });
    expect(committed?.doubt).toBeUndefined();
    const again = transition(call, { type: 'rerun' }, 8);
    expect(again).toMatchObject({ status: 'executing', attempt: 2 });
    expect(again?.doubt).toBeUndefined();
    expect(transition(again as ToolCallRecord, { type: 'rerun' }, 9)).toMatchObject({ attempt: 3 });
  });

  it('never holds or runs again a call that is not running, and never starts a running one twice', () => {
    const pending = createPending({
      id: 'c1',
      name: 'pay',
      source: 'normalised',
      generatedId: false,
      turn: undefined,
      at: 0,
    });
    expect(transition(pending, { type: 'doubt', message: 'x' }, 1)).toBeUndefined();
    expect(transition(pending, { type: 'rerun' }, 1)).toBeUndefined();
    const committed = transition(executing(), { type: 'commit', output: 1 }, 2) as ToolCallRecord;
    expect(transition(committed, { type: 'rerun' }, 3)).toBeUndefined();
    expect(transition(executing(), { type: 'execute' }, 3)).toBeUndefined();
  });
});

/** A browser gate over a pay tool whose runs throw until `works`, and whose reconcile answers `found`. */
function payGate(found: () => Reconciliation<string> | Promise<Reconciliation<string>>, extra: object = {}) {
  const keys: string[] = [];
  const asked: { key: string; attempt: number }[] = [];
  const clock = createFakeClock();
  let works = false;
  const pay = defineTool({
    name: 'pay',
    inputSchema: input,
    idempotencyKey: ({ order }) => `pay:${order}`,
    execute: async (_input, ctx) => {
      keys.push(ctx.idempotencyKey);
      if (!works) throw new Error('socket hang up');
      return 'receipt_2';
    },
    reconcile: ({ idempotencyKey, attempt }) => {
      asked.push({ key: idempotencyKey, attempt });
      works = true;
      return found();
    },
    ...extra,
  });
  const gate = createToolGate({ tools: [pay], clock });
  return { gate, keys, asked, clock };
}

describe('the browser gate asks reconcile when a tool throws', () => {
  it('commits what the downstream found, on its evidence', async () => {
    const { gate, keys, asked } = payGate(() => ({ outcome: 'committed', output: 'receipt_1' }));
    const call = await gate.run({ id: 'c1', name: 'pay', arguments: { order: 'o_1' } });
    expect(call).toMatchObject({
      status: 'committed',
      output: 'receipt_1',
      evidence: { source: 'downstream' },
    });
    expect(keys).toEqual(['pay:o_1']);
    expect(asked).toEqual([{ key: 'pay:o_1', attempt: 1 }]);
    expect(gate.audit.export().map((event) => event.to)).toEqual([
      'pending',
      'validated',
      'executing',
      'committed',
    ]);
  });

  it('runs it again once with the same key when the downstream never saw it', async () => {
    const { gate, keys } = payGate(() => ({ outcome: 'not_executed' }));
    const call = await gate.run({ id: 'c1', name: 'pay', arguments: { order: 'o_1' } });
    expect(call).toMatchObject({ status: 'committed', output: 'receipt_2', attempt: 2 });
    expect(keys).toEqual(['pay:o_1', 'pay:o_1']);
  });

  it('holds it with onUnknown "hold": executing with doubt, not cancellable, stopped for its turn', async () => {
    const { gate } = payGate(() => ({ outcome: 'unknown' }), { onUnknown: 'hold' });
    gate.propose({ id: 'c1', name: 'pay', arguments: { order: 'o_1' } });
    const held = await gate.stopped('c1');
    expect(held).toMatchObject({
      status: 'executing',
      doubt: { message: 'the tool failed: socket hang up; reconcile could not tell (unknown)' },
    });
    expect(heldText(held)).toBe(
      'The outcome of the call to "pay" is unknown (the tool failed: socket hang up; reconcile could not tell (unknown)). A person will check and settle it; do not call "pay" again for this.',
    );
    expect(gate.cancel('c1')).toBe(false);
    expect(gate.get('c1')?.status).toBe('executing');
  });

  it('asks reconcile when the run passes its timeoutMs: found means committed, nothing found means timed out', async () => {
    for (const [found, ending] of [
      [
        { outcome: 'committed', output: 'late' },
        { status: 'committed', output: 'late' },
      ],
      [{ outcome: 'not_executed' }, { status: 'cancelled', reason: { code: 'timeout' } }],
    ] as const) {
      const clock = createFakeClock();
      const pay = defineTool({
        name: 'pay',
        inputSchema: input,
        timeoutMs: 1000,
        execute: () => new Promise<string>(() => undefined),
        reconcile: () => found,
      });
      const gate = createToolGate({ tools: [pay], clock });
      gate.propose({ id: 'c1', name: 'pay', arguments: { order: 'o_1' } });
      await Promise.resolve();
      clock.advance(1000);
      expect(await gate.settled('c1')).toMatchObject(ending);
    }
  });

  it('rejects a call whose key the tool cannot make, before anything runs', async () => {
    let ran = false;
    const pay = defineTool({
      name: 'pay',
      inputSchema: input,
      idempotencyKey: ({ order }) => {
        if (order === 'bad') throw new Error('orders must be numbered');
        return order;
      },
      execute: () => {
        ran = true;
        return 'ok';
      },
    });
    const gate = createToolGate({ tools: [pay] });
    expect(await gate.run({ id: 'c1', name: 'pay', arguments: { order: 'bad' } })).toMatchObject({
      status: 'rejected',
      reason: {
        code: 'invalid_arguments',
        message: 'the idempotencyKey of "pay" threw: orders must be numbered',
      },
    });
    expect(ran).toBe(false);
  });
});

describe('what the model reads', () => {
  const committed = (extra: object) => ({
    ...(transition(executing(), { type: 'commit', output: { charge: 'ch_1' } }, 2) as SettledCall),
    ...extra,
  });

  it('a call committed on evidence: done, on whose word, and not to do it again', () => {
    expect(outcomeText(committed({ evidence: { source: 'downstream', at: 2 } }))).toBe(
      'The call to "pay" was done, but its answer was lost on the way back; this outcome was settled on the evidence of the system it called (found by its idempotency key). Do not call "pay" again for this.\n{"charge":"ch_1"}',
    );
    expect(
      outcomeText(
        committed({ evidence: { source: 'person', by: 'ops_1', note: 'in the dashboard', at: 2 } }),
      ),
    ).toBe(
      'The call to "pay" was done, but its answer was lost on the way back; a person (ops_1) checked and settled it as done. Their note: in the dashboard Do not call "pay" again for this.\n{"charge":"ch_1"}',
    );
  });

  it('a call undone afterwards', () => {
    expect(
      outcomeText(
        committed({
          compensation: {
            id: 'c1:compensate',
            by: 'ops_1',
            reason: 'returned',
            status: 'committed',
            output: { refund: 're_1' },
          },
        }),
      ),
    ).toBe(
      '{"charge":"ch_1"}\nIt was undone afterwards (asked by ops_1: returned); the undoing returned {"refund":"re_1"}.',
    );
    expect(
      outcomeText(committed({ compensation: { id: 'c1:compensate', by: 'ops_1', status: 'failed' } })),
    ).toBe('{"charge":"ch_1"}');
  });

  it('held text is only for a held call', () => {
    expect(heldText(executing())).toBeUndefined();
  });
});

describe('the wire keeps what a server gate says about outcomes, in its shape only', () => {
  const sent = (status: string, extra: object) => ({
    id: 'c1',
    name: 'pay',
    source: 'normalised',
    status,
    createdAt: 1,
    updatedAt: 1,
    history: [{ status, at: 1 }],
    input: { order: 'o_1' },
    ...(status === 'committed' ? { output: 1 } : {}),
    ...extra,
  });

  it('reads doubt on a running call, evidence and a compensation on a committed one, and what a compensation undoes', () => {
    const held = readRecord(
      sent('executing', { doubt: { at: 3, message: 'cut' }, attempt: 2, compensates: 'c0' }),
    );
    expect(held.ok && held.value).toMatchObject({
      doubt: { at: 3, message: 'cut' },
      attempt: 2,
      compensates: 'c0',
    });
    const done = readRecord(
      sent('committed', {
        evidence: { source: 'person', by: 'ops_1', at: 4, note: 'seen', extra: 'dropped' },
        compensation: { id: 'c1:compensate', by: 'ops_1', status: 'committed', output: 2 },
      }),
    );
    expect(done.ok && done.value).toMatchObject({
      evidence: { source: 'person', by: 'ops_1', at: 4, note: 'seen' },
      compensation: { id: 'c1:compensate', status: 'committed' },
    });
    expect(done.ok && (done.value.evidence as object)).not.toHaveProperty('extra');
  });

  it('drops them where they do not belong or are malformed', () => {
    const read = readRecord(
      sent('committed', {
        doubt: { at: 3, message: 'cut' },
        attempt: 1.5,
        evidence: { source: 'person' },
        compensation: { id: 7, status: 'committed' },
      }),
    );
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    for (const key of ['doubt', 'attempt', 'evidence', 'compensation'])
      expect(read.value).not.toHaveProperty(key);
  });
});
