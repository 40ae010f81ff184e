import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { createToolGate, defineTool, type Limits, type LimitsOption } from '../src/index.ts';
import { DEFAULT_LIMITS } from '../src/kit.ts';
import { checkValue } from '../src/proposal/value-walk.ts';

const open = (
  repair: ('stringified_json' | 'string_scalars')[] = [],
  execute = (options: unknown) => Object.assign({}, options) as unknown,
) =>
  defineTool({
    name: 'configure',
    inputSchema: { type: 'object', properties: { options: { type: 'object' } } },
    repair,
    execute: (input) => execute(input.options),
  });

describe('limits hold for repaired values', () => {
  it('refuses a __proto__ key inside a stringified object the repair decoded', async () => {
    const execute = vi.fn();
    const tool = open(['stringified_json'], execute);
    const call = await createToolGate({ tools: [tool] }).run({
      name: 'configure',
      arguments: '{"options":"{\\"__proto__\\":{\\"admin\\":true}}"}',
    });
    expect(call.status).toBe('rejected');
    expect(call.reason?.issues).toEqual([expect.objectContaining({ path: '/options/__proto__' })]);
    expect(execute).not.toHaveBeenCalled();
    expect(({} as Record<string, unknown>)['admin']).toBeUndefined();
  });

  it('refuses a stringified object that nests deeper than the limit', async () => {
    const execute = vi.fn();
    const tool = open(['stringified_json'], execute);
    const gate = createToolGate({ tools: [tool], limits: { maxDepth: 8 } });
    const deep = '{"a":'.repeat(20) + '1' + '}'.repeat(20);
    const call = await gate.run({ name: 'configure', arguments: { options: deep } });
    expect(call.status).toBe('rejected');
    expect(execute).not.toHaveBeenCalled();
  });

  it('refuses a decoded value that, at its place, ends up deeper than the limit', async () => {
    const tool = open(['stringified_json'], vi.fn());
    const gate = createToolGate({ tools: [tool], limits: { maxDepth: 4 } });
    const call = await gate.run({ name: 'configure', arguments: { options: '{"a":{"b":{"c":{}}}}' } });
    expect(call.reason?.code).toBe('too_deep');
  });
});

describe('__proto__ keys in text', () => {
  it.each([
    ['plain', '{"a":1,"__proto__":{"x":1}}'],
    ['spelled with escapes', '{"a":1,"\\u005f_proto__":{"x":1}}'],
    [
      'escaped, deep in many objects',
      JSON.stringify({ rows: Array.from({ length: 100 }, () => ({ a: 1 })) }).replace(
        '"a":1}]',
        '"a":1,"\\u005f\\u005fproto__":{}}]',
      ),
    ],
  ])('refuses a __proto__ key %s', async (_how, text) => {
    const tool = defineTool({ name: 'open', inputSchema: { type: 'object' }, execute: vi.fn() });
    const call = await createToolGate({ tools: [tool] }).run({ name: 'open', arguments: text });
    expect(call.reason?.issues?.[0]?.path).toMatch(/__proto__$/);
  });
});

describe('object arguments', () => {
  it('runs the tool with the value that was validated, whatever the caller does to its object later', async () => {
    const execute = vi.fn((input: { cents: number }) => input.cents);
    const tool = defineTool({
      name: 'pay',
      inputSchema: {
        type: 'object',
        properties: { cents: { type: 'integer', minimum: 0 } },
        required: ['cents'],
      },
      needsApproval: true,
      execute,
    });
    const gate = createToolGate({ tools: [tool] });
    const args = { cents: 5 };
    gate.propose({ type: 'tool_use', id: 't1', name: 'pay', input: args });
    args.cents = -1000;
    gate.approve('t1');
    const call = await gate.settled('t1');
    expect(execute).toHaveBeenCalledWith({ cents: 5 }, expect.anything());
    expect(call).toMatchObject({ status: 'committed', input: { cents: 5 }, output: 5 });
  });

  it('stops walking a wide object as soon as it passes the size limit, even when it is all empty arrays', () => {
    let reads = 0;
    const row = new Proxy(new Array<unknown[]>(3_000).fill([]), {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const rows = new Array(3_000).fill(row);
    const gate = createToolGate({ tools: [open()] });
    const call = gate.propose({ name: 'configure', arguments: { options: { rows } } });
    expect(call.reason?.code).toBe('too_large');
    // 9,000,000 arrays in all; the walk reads only as many as the 262,144-character budget allows.
    expect(reads).toBeLessThan(150_000);
  });
});

describe('limits in the options', () => {
  const echo = () => defineTool({ name: 'echo', inputSchema: { type: 'object' }, execute: (input) => input });

  it('takes the default for a limit left unset, so a missing config value never switches it off', () => {
    // As a config read from the environment gives them where nothing was set: the option's type
    // takes `undefined` for each limit, even under exactOptionalPropertyTypes.
    const unset: LimitsOption = { maxArgumentChars: undefined, maxDepth: undefined };
    const gate = createToolGate({ tools: [echo()], limits: unset });
    expect(gate.limits).toEqual(DEFAULT_LIMITS);
    const call = gate.propose({
      name: 'echo',
      arguments: '{"pad":"' + 'x'.repeat(DEFAULT_LIMITS.maxArgumentChars) + '"}',
    });
    expect(call.reason?.code).toBe('too_large');
    const deep = gate.propose({ name: 'echo', arguments: '{"a":'.repeat(100) + '1' + '}'.repeat(100) });
    expect(deep.reason?.code).toBe('too_deep');
  });

  it('keeps the limits it was given and the defaults for the rest', () => {
    const gate = createToolGate({ tools: [echo()], limits: { maxDepth: 3 } });
    expect(gate.limits).toEqual({ maxArgumentChars: DEFAULT_LIMITS.maxArgumentChars, maxDepth: 3 });
    expect(gate.propose({ name: 'echo', arguments: '{"a":{"b":{"c":{}}}}' }).reason?.code).toBe('too_deep');
  });

  it.each([
    ['maxArgumentChars', 0, /limits\.maxArgumentChars must be a positive whole number \(got 0\)/],
    ['maxArgumentChars', -1, /limits\.maxArgumentChars must be a positive whole number \(got -1\)/],
    ['maxArgumentChars', Number.NaN, /limits\.maxArgumentChars .*\(got NaN\)/],
    ['maxArgumentChars', Infinity, /limits\.maxArgumentChars .*\(got Infinity\)/],
    ['maxArgumentChars', '65536', /limits\.maxArgumentChars .*\(got the string "65536"\)/],
    ['maxDepth', 2.5, /limits\.maxDepth must be a positive whole number \(got 2\.5\)/],
    ['maxDepth', null, /limits\.maxDepth .*\(got null\)/],
  ])(
    'refuses limits.%s = %s when the gate is created, naming the option and the value',
    (key, value, message) => {
      const limits = { [key]: value } as unknown as Partial<Limits>;
      expect(() => createToolGate({ tools: [echo()], limits })).toThrow(message);
    },
  );

  it('refuses limits that are not an object', () => {
    expect(() => createToolGate({ tools: [echo()], limits: 64 as unknown as Partial<Limits> })).toThrow(
      /limits must be an object .*\(got 64\)/,
    );
  });
});

describe('deep values', () => {
  it('rely on a JSON.parse that does not recurse: it reads text 300,000 levels deep', () => {
    // A recursive parser would need a stack frame per level, far more than the default stack.
    const depth = 300_000;
    expect(() => JSON.parse('['.repeat(depth) + ']'.repeat(depth))).not.toThrow();
    expect(() => JSON.parse('{"a":'.repeat(depth) + '1' + '}'.repeat(depth))).not.toThrow();
  });

  it('are walked without recursion, as deep as a limit allows, as text and as objects', async () => {
    const depth = 100_000;
    const tool = defineTool({ name: 'nest', inputSchema: { type: 'object' }, execute: () => 'ok' });
    const gate = createToolGate({
      tools: [tool],
      limits: { maxArgumentChars: 10_000_000, maxDepth: depth + 1 },
    });
    let value: Record<string, unknown> = { leaf: 1 };
    for (let i = 1; i < depth; i++) value = { a: value };
    const text = '{"a":'.repeat(depth - 1) + '{"leaf":1}' + '}'.repeat(depth - 1);
    expect((await gate.run({ name: 'nest', arguments: text })).status).toBe('committed');
    expect((await gate.run({ name: 'nest', arguments: value })).status).toBe('committed');
    const tighter = createToolGate({
      tools: [tool],
      limits: { maxArgumentChars: 10_000_000, maxDepth: depth - 1 },
    });
    expect(tighter.propose({ name: 'nest', arguments: text }).reason?.code).toBe('too_deep');
    expect(tighter.propose({ name: 'nest', arguments: value }).reason?.code).toBe('too_deep');
  });
});

describe('the two walks over a parsed value', () => {
  // Text, so that `__proto__` is an own key (as JSON.parse makes it) and 1e400 reads as Infinity.
  const text: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom('1', '1e400', '-1e400', '"s"', 'true', 'null'),
      fc.array(tie('node'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
      fc
        .array(fc.tuple(fc.constantFrom('a', 'b', '__proto__', 'c'), tie('node')), { maxLength: 4 })
        .map((entries) => `{${entries.map(([key, value]) => `"${key}":${value}`).join(',')}}`),
    ),
  })).node;

  it('answer alike: the walk that recurses (limits a stack can take) and the one that keeps its own stack', () => {
    fc.assert(
      fc.property(text, (source) => {
        const value: unknown = JSON.parse(source);
        expect(checkValue(value, 150)).toEqual(checkValue(value, 100_000));
      }),
      { numRuns: 500 },
    );
  });
});
