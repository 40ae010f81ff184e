import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { createToolGate, defineTool, type Limits, type ToolCallRecord } from '../src/index.ts';

interface Wallet {
  readonly balance_cents: number;
}

/** A charge whose schema takes any number of at least 1: JSON Schema's `number` does not say "finite". */
function wallet(limits?: Partial<Limits>) {
  const store = createStore<Wallet>()(() => ({ balance_cents: 10_000 }));
  const execute = vi.fn((input: { amount_cents: number }) => input.amount_cents);
  const charge = defineTool({
    name: 'charge',
    inputSchema: {
      type: 'object',
      properties: { amount_cents: { type: 'number', minimum: 1 } },
      required: ['amount_cents'],
    },
    repair: ['string_scalars', 'double_encoded', 'trailing_text'],
    execute,
    commit: (state: Wallet, output: number) => ({ balance_cents: state.balance_cents - output }),
  });
  const gate = createToolGate({ tools: [charge], store, ...(limits === undefined ? {} : { limits }) });
  return { gate, store, execute };
}

describe('numbers out of range', () => {
  it.each([
    ['as text', '{"amount_cents":1e400}'],
    ['as an object', { amount_cents: Infinity }],
  ])('refuses a charge of 1e400 %s at its path, and never runs it', async (_form, raw) => {
    const { gate, store, execute } = wallet();
    const call = await gate.run({ name: 'charge', arguments: raw });
    expect(call.status).toBe('rejected');
    expect(call.reason).toMatchObject({
      code: 'invalid_arguments',
      issues: [{ path: '/amount_cents', message: 'must be a finite number (got Infinity)' }],
    });
    expect(execute).not.toHaveBeenCalled();
    expect(store.getState().balance_cents).toBe(10_000);
  });

  it.each([
    ['a negative exponent overflow', '{"amount_cents":5,"meta":{"rates":[1,-1e999]}}', '/meta/rates/1'],
    ['a key that needs escaping', '{"amount_cents":5,"a/b":{"~":1E+400}}', '/a~1b/~0'],
    ['a double-encoded object', JSON.stringify('{"amount_cents":1e400}'), '/amount_cents'],
    ['JSON with prose after it', '{"amount_cents":1e400} hope that helps', '/amount_cents'],
  ])('refuses %s holding a number out of range', async (_how, text, path) => {
    const { gate, execute } = wallet();
    const call = await gate.run({ name: 'charge', arguments: text });
    expect(call.reason).toMatchObject({ code: 'invalid_arguments', issues: [{ path }] });
    expect(execute).not.toHaveBeenCalled();
  });

  it('refuses a string the string_scalars repair would read as Infinity', async () => {
    const { gate, store, execute } = wallet();
    const call = await gate.run({ name: 'charge', arguments: '{"amount_cents":"1e400"}' });
    expect(call.status).toBe('rejected');
    expect(call.reason?.code).toBe('invalid_arguments');
    expect(execute).not.toHaveBeenCalled();
    expect(store.getState().balance_cents).toBe(10_000);
  });

  it('refuses 1e400 inside a JSON tool call string, as it does in the arguments', async () => {
    const { gate, execute } = wallet();
    const call = await gate.run('{"name":"charge","arguments":{"amount_cents":1e400}}');
    expect(call.reason).toMatchObject({ code: 'invalid_arguments', issues: [{ path: '/amount_cents' }] });
    expect(execute).not.toHaveBeenCalled();
  });

  it('commits numbers that are large, tiny or -0 but finite', async () => {
    const { gate, store } = wallet();
    const call = await gate.run({
      name: 'charge',
      arguments: '{"amount_cents":1e300,"tiny":1e-400,"zero":-0}',
    });
    expect(call).toMatchObject({ status: 'committed', input: { amount_cents: 1e300, tiny: 0 } });
    expect(call.status === 'committed' && Object.is((call.input as { zero: number }).zero, -0)).toBe(true);
    expect(store.getState().balance_cents).toBe(10_000 - 1e300);
  });
});

describe('on a page where Object.prototype has an enumerable key', () => {
  it('reads text as it does anywhere else, and never takes the inherited key for an argument', async () => {
    const { gate } = wallet();
    // Compiled before the page is polluted, as an app that calls check() at start-up has it
    // (Ajv's compiler itself walks schemas with for…in).
    expect(gate.check()).toEqual([]);
    Object.defineProperty(Object.prototype, 'injected', {
      value: Infinity,
      enumerable: true,
      configurable: true,
      writable: true,
    });
    try {
      expect((await gate.run({ name: 'charge', arguments: '{"amount_cents":5}' })).status).toBe('committed');
      const call = await gate.run({ name: 'charge', arguments: '{"amount_cents":5,"meta":{"rate":1e400}}' });
      expect(call.reason?.issues?.map((issue) => issue.path)).toEqual(['/meta/rate']);
      const proto = await gate.run({ name: 'charge', arguments: '{"amount_cents":5,"__proto__":{}}' });
      expect(proto.reason?.issues?.map((issue) => issue.path)).toEqual(['/__proto__']);
    } finally {
      delete (Object.prototype as Record<string, unknown>)['injected'];
    }
  });
});

describe('the size of an object', () => {
  const echo = () => defineTool({ name: 'echo', inputSchema: { type: 'object' }, execute: () => 'ok' });
  const value = { note: 'a "quoted" line\n', n: [-0, 1.5, 1e21, true, false, null], '': { é: '\ud800' } };
  const text = JSON.stringify(value).replace('[0,', '[-0,');

  it('is the length of its compact JSON text, so it is refused exactly where that text is', () => {
    for (const [limit, status] of [
      [text.length, 'committed'],
      [text.length - 1, 'rejected'],
    ] as const) {
      const gate = createToolGate({ tools: [echo()], limits: { maxArgumentChars: limit } });
      expect(gate.propose({ name: 'echo', arguments: text }).status).toBe(status);
      expect(gate.propose({ name: 'echo', arguments: value }).status).toBe(status);
    }
  });

  it('decides too_large before anything else, as text over the limit is refused unread', () => {
    const gate = createToolGate({ tools: [echo()], limits: { maxArgumentChars: 64, maxDepth: 2 } });
    const big = { first: Infinity, deep: [[[1]]], pad: 'x'.repeat(100) };
    expect(gate.propose({ name: 'echo', arguments: big }).reason?.code).toBe('too_large');
  });
});

describe('text and object arguments', () => {
  /** What a proposal's outcome shows a model: the status, the reason code and the paths of the issues. */
  const decision = (call: ToolCallRecord) => ({
    status: call.status,
    code: call.reason?.code,
    paths: call.reason?.issues?.map((issue) => issue.path),
    input: call.status === 'committed' ? call.input : undefined,
  });

  const key = fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength: 4 }) },
    fc.constantFrom('__proto__', 'constructor', 'a/b', '~0', '0', '10'),
  );
  const number = fc.oneof(fc.double({ noNaN: true }), fc.integer(), {
    weight: 2,
    arbitrary: fc.constantFrom(-0, Infinity, -Infinity, 1e308, Number.MAX_SAFE_INTEGER + 2, 5e-324),
  });
  const leaf = fc.oneof(fc.string({ unit: 'binary', maxLength: 6 }), number, fc.boolean(), fc.constant(null));
  const { value } = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>(
    (tie) => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 4 }),
      // fromEntries defines keys, so `__proto__` becomes an own key, as JSON.parse makes it.
      object: fc
        .array(fc.tuple(key, tie('value')), { maxLength: 4 })
        .map((entries) => Object.fromEntries(entries)),
    }),
  );
  /** A value, sometimes nested in a chain of objects and arrays about as deep as the limit. */
  const nested = fc
    .tuple(value, fc.oneof(fc.constant([]), fc.array(fc.oneof(key, fc.constant(0)), { maxLength: 8 })))
    .map(([inner, chain]) =>
      chain.reduceRight<unknown>(
        (wrapped, link) => (link === 0 ? [wrapped] : Object.fromEntries([[link, wrapped]])),
        inner,
      ),
    );
  const top = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(key, nested).map(([k, v]) => Object.fromEntries([[k, v]])) },
    nested,
  );
  const args = top.filter((v) => typeof v !== 'string');

  /**
   * The value as a model would write it: compact JSON, with -0 kept and ±Infinity written as a
   * number too large for a double (as long as the word, so the size agrees too).
   */
  const write = (v: unknown): string => {
    if (typeof v === 'number') {
      if (Object.is(v, -0)) return '-0';
      if (!Number.isFinite(v)) return v > 0 ? '1e400000' : '-1e400000';
      return String(v);
    }
    if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
    if (typeof v === 'object' && v !== null) {
      return `{${Object.keys(v)
        .map((k) => `${JSON.stringify(k)}:${write((v as Record<string, unknown>)[k])}`)
        .join(',')}}`;
    }
    return JSON.stringify(v);
  };

  it('reach the same decision for every value, at the same paths', () => {
    fc.assert(
      fc.property(
        args,
        fc.integer({ min: 1, max: 10 }),
        fc.option(fc.integer({ min: -3, max: 3 }), { freq: 2 }),
        (raw, maxDepth, slack) => {
          const text = write(raw);
          expect(JSON.parse(text)).toEqual(raw);
          const maxArgumentChars = slack === null ? 262_144 : Math.max(1, text.length + slack);
          const gate = createToolGate({
            tools: [defineTool({ name: 'echo', inputSchema: {}, execute: () => 'ok' })],
            limits: { maxArgumentChars, maxDepth },
          });
          const asText = decision(gate.propose({ name: 'echo', arguments: text }));
          expect(decision(gate.propose({ name: 'echo', arguments: raw }))).toEqual(asText);
          expect(decision(gate.propose(`{"name":"echo","arguments":${text}}`))).toEqual(asText);
        },
      ),
      { numRuns: 400 },
    );
  });
});
