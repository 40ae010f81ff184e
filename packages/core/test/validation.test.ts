import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cfworkerJsonSchema } from '../src/csp.ts';
import { ajvJsonSchema } from '../src/kit.ts';
import {
  createToolGate,
  defineTool,
  type Issue,
  type JsonSchemaCompiler,
  type ToolSchema,
} from '../src/index.ts';

async function issuesFor(
  schema: ToolSchema,
  value: unknown,
  jsonSchema: JsonSchemaCompiler = ajvJsonSchema,
): Promise<readonly Issue[] | 'valid'> {
  const tool = defineTool({ name: 't', inputSchema: schema, execute: () => 'ok' });
  const call = await createToolGate({ tools: [tool], jsonSchema }).run({ name: 't', arguments: value });
  if (call.status === 'committed') return 'valid';
  expect(call.reason?.code).toBe('invalid_arguments');
  return call.reason?.issues ?? [];
}

const order = {
  type: 'object',
  properties: {
    sku: { type: 'string', pattern: '^SKU-[0-9]+$' },
    qty: { type: 'integer', minimum: 1, maximum: 10 },
    email: { type: 'string', format: 'email' },
    note: { type: 'string', minLength: 2, maxLength: 5 },
    kind: { const: 'order' },
    color: { enum: ['red', 'blue'] },
    price: { type: 'number', exclusiveMinimum: 0, multipleOf: 0.5 },
    lines: {
      type: 'array',
      minItems: 1,
      maxItems: 2,
      items: {
        type: 'object',
        properties: { sku: { type: 'string' } },
        required: ['sku'],
        additionalProperties: false,
      },
    },
    ship: {
      anyOf: [
        { type: 'null' },
        { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      ],
    },
    pay: { oneOf: [{ const: 'card' }, { const: 'cash' }] },
    'a/b~c': { type: 'boolean' },
  },
  required: ['sku', 'qty'],
  additionalProperties: false,
} as const;

const valid = {
  sku: 'SKU-1',
  qty: 2,
  email: 'a@b.co',
  note: 'hey',
  kind: 'order',
  color: 'red',
  price: 1.5,
  lines: [{ sku: 'x' }],
  ship: null,
  pay: 'card',
  'a/b~c': true,
};

describe.each([
  ['Ajv', ajvJsonSchema],
  ['@cfworker/json-schema', cfworkerJsonSchema],
])('JSON Schema values with %s', (_name, jsonSchema) => {
  it('accepts a value that matches every keyword', async () => {
    expect(await issuesFor(order, valid, jsonSchema)).toBe('valid');
  });

  it.each([
    ['type', { qty: '2' }, '/qty', 'must be integer (got string "2")'],
    ['minimum', { qty: 0 }, '/qty', 'must be >= 1 (got integer 0)'],
    ['maximum', { qty: 11 }, '/qty', 'must be <= 10 (got integer 11)'],
    ['pattern', { sku: 'sku-1' }, '/sku', 'must match the pattern ^SKU-[0-9]+$ (got string "sku-1")'],
    ['format', { email: 'not-an-email' }, '/email', 'must be a valid email (got string "not-an-email")'],
    ['minLength', { note: 'a' }, '/note', 'must have at least 2 characters (got string "a")'],
    ['maxLength', { note: 'abcdef' }, '/note', 'must have at most 5 characters (got string "abcdef")'],
    ['const', { kind: 'refund' }, '/kind', 'must be "order" (got string "refund")'],
    ['enum', { color: 'green' }, '/color', 'must be one of "red", "blue" (got string "green")'],
    ['exclusiveMinimum', { price: 0 }, '/price', 'must be > 0 (got integer 0)'],
    ['multipleOf', { price: 0.7 }, '/price', 'must be a multiple of 0.5 (got number 0.7)'],
    ['minItems', { lines: [] }, '/lines', 'must have at least 1 items (got array of 0)'],
    [
      'maxItems',
      { lines: [{ sku: 'a' }, { sku: 'b' }, { sku: 'c' }] },
      '/lines',
      'must have at most 2 items (got array of 3)',
    ],
    ['required in a nested array item', { lines: [{}] }, '/lines/0/sku', 'is required'],
    [
      'additionalProperties in a nested item',
      { lines: [{ sku: 'a', extra: 1 }] },
      '/lines/0/extra',
      'is not an allowed property',
    ],
    ['additionalProperties at the top', { surprise: 1 }, '/surprise', 'is not an allowed property'],
    [
      'anyOf',
      { ship: 'home' },
      '/ship',
      'must match at least one of: null; object with city (got string "home")',
    ],
    ['oneOf', { pay: 'iou' }, '/pay', 'must match exactly one of: "card"; "cash" (got string "iou")'],
    ['an escaped key', { 'a/b~c': 'yes' }, '/a~1b~0c', 'must be boolean (got string "yes")'],
  ])(
    'reports %s with the path, the keyword and what was expected',
    async (keyword, change, path, message) => {
      const issues = await issuesFor(order, { ...valid, ...change }, jsonSchema);
      expect(issues).toContainEqual(expect.objectContaining({ path, message }));
      if (!keyword.includes(' ')) expect(issues).toContainEqual(expect.objectContaining({ keyword }));
    },
  );

  it('reports every wrong value at once', async () => {
    const issues = await issuesFor(order, { sku: 1, qty: 'x', color: 'green' }, jsonSchema);
    expect(issues !== 'valid' && issues.map((i) => i.path).sort()).toEqual(['/color', '/qty', '/sku']);
  });

  it('reports a missing required key at its own path', async () => {
    expect(await issuesFor(order, { sku: 'SKU-1' }, jsonSchema)).toEqual([
      { path: '/qty', message: 'is required', keyword: 'required' },
    ]);
  });

  it('does not count an inherited property as present for required', async () => {
    const issues = await issuesFor({ type: 'object', required: ['constructor', 'toString'] }, {}, jsonSchema);
    expect(issues !== 'valid' && issues.map((i) => i.path).sort()).toEqual(['/constructor', '/toString']);
  });

  it('rejects arguments that are not an object', async () => {
    const tool = defineTool({ name: 't', inputSchema: { type: 'object' }, execute: () => 'ok' });
    const call = await createToolGate({ tools: [tool], jsonSchema }).run({ name: 't', arguments: '[1,2]' });
    expect(call.reason?.issues).toEqual([
      { path: '', message: 'must be object (got array of 2)', keyword: 'type' },
    ]);
  });
});

describe('Standard Schema', () => {
  it('validates with Zod 4 and reports paths', async () => {
    const schema = z.object({
      amount_cents: z.number().int().min(0),
      items: z.array(z.object({ sku: z.string() })),
    });
    expect(await issuesFor(schema, { amount_cents: 5, items: [{ sku: 'a' }] })).toBe('valid');
    const issues = await issuesFor(schema, { amount_cents: '12.50', items: [{ sku: 1 }] });
    expect(issues !== 'valid' && issues.map((i) => i.path)).toEqual(['/amount_cents', '/items/0/sku']);
    expect(issues !== 'valid' && issues[0]?.message).toMatch(/expected number/);
  });

  it('validates with Valibot and reports paths', async () => {
    const schema = v.object({
      amount_cents: v.pipe(v.number(), v.integer(), v.minValue(0)),
      currency: v.picklist(['USD', 'EUR']),
    });
    expect(await issuesFor(schema, { amount_cents: 5, currency: 'USD' })).toBe('valid');
    const issues = await issuesFor(schema, { amount_cents: 12.5, currency: 'GBP' });
    expect(issues !== 'valid' && issues.map((i) => i.path)).toEqual(['/amount_cents', '/currency']);
  });

  it('passes the value a schema transforms to on to the tool', async () => {
    const tool = defineTool({
      name: 't',
      inputSchema: z.object({ when: z.string().transform((s) => s.length) }),
      execute: (input) => input.when * 2,
    });
    const call = await createToolGate({ tools: [tool] }).run({ name: 't', arguments: '{"when":"abc"}' });
    expect(call).toMatchObject({ status: 'committed', input: { when: 3 }, output: 6 });
  });

  it('waits for an async Standard Schema, keeping the call pending meanwhile', async () => {
    const schema = z.object({ user: z.string().refine(async (u) => u !== 'banned', 'is banned') });
    const tool = defineTool({ name: 't', inputSchema: schema, execute: () => 'ok' });
    const gate = createToolGate({ tools: [tool] });
    const call = gate.propose({ id: 'a', name: 't', arguments: '{"user":"banned"}' });
    expect(call.status).toBe('pending');
    const done = await gate.settled('a');
    expect(done.reason?.issues).toEqual([{ path: '/user', message: 'is banned' }]);
  });

  it('turns a validator that throws into a rejection with the reason', async () => {
    const schema = {
      '~standard': {
        version: 1 as const,
        vendor: 'broken',
        validate: () => {
          throw new Error('validator bug');
        },
      },
    };
    const issues = await issuesFor(schema, {});
    expect(issues).toEqual([{ path: '', message: 'the validator threw: validator bug' }]);
  });
});

describe('a validator is trusted only when it says yes', () => {
  /** A Standard Schema that answers with `answer(value)`, whatever that is. */
  const answering = (answer: (value: unknown) => unknown): ToolSchema =>
    ({ '~standard': { version: 1, vendor: 'odd', validate: answer } }) as unknown as ToolSchema;

  async function run(schema: ToolSchema, jsonSchema?: JsonSchemaCompiler) {
    let ran: unknown = 'never';
    const tool = defineTool({ name: 't', inputSchema: schema, execute: (input) => (ran = input) });
    const call = await createToolGate({ tools: [tool], ...(jsonSchema ? { jsonSchema } : {}) }).run({
      name: 't',
      arguments: '{"a":1}',
    });
    return { call, ran };
  }

  it('waits for a thenable from another realm and commits the value it resolves to', async () => {
    // A Promise from an iframe or a vm context is not `instanceof Promise` here.
    const { call, ran } = await run(
      answering((value) => ({
        then: (resolve: (result: unknown) => void) =>
          resolve({ value: { ...(value as object), checked: true } }),
      })),
    );
    expect(call).toMatchObject({ status: 'committed', input: { a: 1, checked: true } });
    expect(ran).toEqual({ a: 1, checked: true });
  });

  it('rejects with the issues a thenable from another realm resolves to', async () => {
    const { call, ran } = await run(
      answering(() => ({
        then: (resolve: (result: unknown) => void) => resolve({ issues: [{ message: 'nope', path: ['a'] }] }),
      })),
    );
    expect(call.reason).toMatchObject({
      code: 'invalid_arguments',
      issues: [{ path: '/a', message: 'nope' }],
    });
    expect(ran).toBe('never');
  });

  it.each([
    ['neither value nor issues', () => ({})],
    [
      'a thenable that resolves to neither',
      () => ({ then: (resolve: (result: unknown) => void) => resolve({}) }),
    ],
    ['nothing at all', () => undefined],
    ['issues that are not a list', () => ({ issues: 'wrong' })],
    [
      'a thenable whose then throws',
      () => ({
        then: () => {
          throw new Error('realm gone');
        },
      }),
    ],
  ])('rejects a Standard Schema answer with %s, and runs nothing', async (_what, answer) => {
    const { call, ran } = await run(answering(answer));
    expect(call.status).toBe('rejected');
    expect(call.reason?.code).toBe('invalid_arguments');
    expect(call.reason?.message).toMatch(/validator/);
    expect(ran).toBe('never');
  });

  it('rejects an empty list of issues as a failure that does not say why', async () => {
    const { call } = await run(answering(() => ({ issues: [] })));
    expect(call.reason?.issues).toEqual([
      { path: '', message: 'the validator refused the value without saying why' },
    ]);
  });

  it.each([
    ['ok: "yes"', { ok: 'yes', value: { a: 2 } }],
    ['ok: true without a value', { ok: true }],
    ['ok: false without issues', { ok: false }],
    ['null', null],
  ])('does not run a call a JSON Schema compiler answers %s for', async (_what, answer) => {
    const compiler: JsonSchemaCompiler = () => () => answer as never;
    const { call, ran } = await run({ type: 'object' }, compiler);
    expect(call.status).toBe('rejected');
    expect(call.reason?.message).toMatch(/validator/);
    expect(ran).toBe('never');
  });
});

describe('the model is told what was expected', () => {
  it('names the tool, every offending path and what was expected in the reason message', async () => {
    const tool = defineTool({ name: 'charge', inputSchema: order, execute: () => 'ok' });
    const call = await createToolGate({ tools: [tool] }).run({
      name: 'charge',
      arguments: { sku: 'SKU-1', qty: '2' },
    });
    expect(call.reason?.message).toBe(
      'the arguments of "charge" do not match its schema: /qty must be integer (got string "2")',
    );
  });
});

describe('schemas that cannot work', () => {
  it('reports a tool schema that does not compile, naming the tool, from gate.check() and at the first call', async () => {
    const tool = defineTool({
      name: 'bad',
      inputSchema: { type: 'object', properties: { a: { type: 'nonsense' } } } as unknown as ToolSchema,
      execute: () => 1,
    });
    const gate = createToolGate({ tools: [tool] });
    expect(gate.check()).toEqual([
      {
        tool: 'bad',
        message: expect.stringMatching(/^the input schema of tool "bad" does not compile/) as string,
      },
    ]);
    expect((await gate.run({ name: 'bad', arguments: '{}' })).reason?.code).toBe('tool_unavailable');
  });
});

describe('a mistyped schema on the default validator', () => {
  it.each([
    [
      { type: 'object', properties: { n: { type: 'integer', minimum: '5' } } },
      'data/properties/n/minimum must be a number',
    ],
    [
      { type: 'object', properties: { s: { type: 'string', pattern: '(' } } },
      'data/properties/s/pattern must be a regular expression',
    ],
    [{ type: 'object', required: 'n' }, 'data/required must be a list of property names'],
    [
      { type: 'object', properties: { s: { type: 'string', maxLength: -1 } } },
      'data/properties/s/maxLength must be a whole number',
    ],
    [{ type: 'object', anyOf: [] }, 'data/anyOf must be a non-empty list of schemas'],
    [{ type: 'object', properties: { a: 'string' } }, 'data/properties/a must be a schema'],
  ])(
    'does not compile %j: the tool is reported and its calls refused, never validated by a schema it misread',
    async (schema, message) => {
      const tool = defineTool({
        name: 'bad',
        inputSchema: schema as unknown as ToolSchema,
        execute: () => 1,
      });
      const gate = createToolGate({ tools: [tool] });
      expect(gate.check()[0]?.message).toContain(`does not compile: schema is invalid: ${message}`);
      const call = await gate.run({ name: 'bad', arguments: '{"n":1,"s":"x"}' });
      expect(call.reason?.code).toBe('tool_unavailable');
    },
  );
});

describe('compiling', () => {
  it('compiles a schema object once, however many gates use it', () => {
    const schema = { type: 'object', properties: { q: { type: 'string' } } } as const;
    expect(ajvJsonSchema(schema)).toBe(ajvJsonSchema(schema));
    expect(ajvJsonSchema(schema)).not.toBe(ajvJsonSchema({ ...schema }));
  });
});
