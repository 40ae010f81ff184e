/**
 * Known model defects in whole calls: each is rejected with a reason that names it, unless the
 * tool opted in to that repair; a repair is recorded on the call and in the audit trail, and the
 * repaired input is validated like any other.
 */
import { describe, expect, it } from 'vitest';
import { ALL_REPAIRS } from '../src/proposal/repair.ts';
import { createToolGate, defineTool, type RepairKind } from '../src/index.ts';

const searchSchema = {
  type: 'object',
  properties: {
    query: { type: 'string' },
    limit: { type: 'integer' },
    include_archived: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    filter: { type: 'object', properties: { year: { type: 'integer' } } },
  },
  required: ['query'],
  additionalProperties: false,
} as const;

function gateFor(repair?: readonly RepairKind[]) {
  const search = defineTool({
    name: 'search_docs',
    inputSchema: searchSchema,
    execute: (input) => input,
    ...(repair ? { repair } : {}),
  });
  const list = defineTool({
    name: 'list_open_tickets',
    inputSchema: { type: 'object', additionalProperties: false },
    execute: () => [],
    ...(repair ? { repair } : {}),
  });
  return createToolGate({ tools: [search, list] });
}

const cases: {
  defect: string;
  name?: string;
  args: string;
  code: string;
  message: RegExp;
  repaired: unknown;
  kind: RepairKind;
}[] = [
  {
    defect: 'double-encoded arguments',
    args: JSON.stringify(JSON.stringify({ query: 'rate limits' })),
    code: 'invalid_json',
    message: /double-encoded/,
    repaired: { query: 'rate limits' },
    kind: 'double_encoded',
  },
  {
    defect: 'prose after the JSON',
    args: '{"query":"rate limits","limit":5}\nThis searches the docs for rate limits.',
    code: 'invalid_json',
    message: /text after the JSON object \("This searches the docs for rate limits\."\)/,
    repaired: { query: 'rate limits', limit: 5 },
    kind: 'trailing_text',
  },
  {
    defect: 'a code fence around the JSON',
    args: '```json\n{"query":"rate limits"}\n```',
    code: 'invalid_json',
    message: /wrapped in a code fence/,
    repaired: { query: 'rate limits' },
    kind: 'trailing_text',
  },
  {
    defect: 'numbers and booleans as strings',
    args: '{"query":"rate limits","limit":"5","include_archived":"false"}',
    code: 'invalid_arguments',
    message:
      /\/limit must be integer \(got string "5"\); \/include_archived must be boolean \(got string "false"\)/,
    repaired: { query: 'rate limits', limit: 5, include_archived: false },
    kind: 'string_scalars',
  },
  {
    defect: 'nested arrays and objects as JSON strings',
    args: '{"query":"q","tags":"[\\"a\\",\\"b\\"]","filter":"{\\"year\\":2024}"}',
    code: 'invalid_arguments',
    message: /\/tags must be array \(got string/,
    repaired: { query: 'q', tags: ['a', 'b'], filter: { year: 2024 } },
    kind: 'stringified_json',
  },
  {
    defect: 'an empty string for a tool with no arguments',
    name: 'list_open_tickets',
    args: '',
    code: 'invalid_json',
    message: /empty string; a tool without arguments takes \{\}/,
    repaired: {},
    kind: 'empty_arguments',
  },
];

describe.each(cases)('$defect', ({ name = 'search_docs', args, code, message, repaired, kind }) => {
  it('is rejected by default with a reason that names it', async () => {
    const call = await gateFor().run({ name, arguments: args });
    expect(call.status).toBe('rejected');
    expect(call.reason?.code).toBe(code);
    expect(call.reason?.message).toMatch(message);
  });

  it(`is repaired when the tool allows ${kind}, recorded on the call and in the audit trail`, async () => {
    const gate = gateFor([kind]);
    const call = await gate.run({ name, arguments: args });
    expect(call).toMatchObject({ status: 'committed', input: repaired });
    expect(call.repairs?.map((r) => r.kind)).toContain(kind);
    const validated = gate.audit.export().find((e) => e.callId === call.id && e.to === 'validated');
    expect(validated?.repairs).toEqual(call.repairs);
  });

  it('is not repaired by a different repair kind', async () => {
    const call = await gateFor(ALL_REPAIRS.filter((k) => k !== kind)).run({ name, arguments: args });
    expect(call.status).toBe('rejected');
  });
});

describe('defects that are never repaired', () => {
  it('rejects two objects concatenated, even with every repair allowed', async () => {
    const call = await gateFor(ALL_REPAIRS).run({
      name: 'search_docs',
      arguments: '{"query":"Tokyo"}{"query":"Osaka"}',
    });
    expect(call.reason).toMatchObject({ code: 'invalid_json' });
    expect(call.reason?.message).toMatch(/two JSON objects back to back/);
  });

  it('does not keep a scalar repair that still fails the schema', async () => {
    const call = await gateFor(ALL_REPAIRS).run({
      name: 'search_docs',
      arguments: '{"query":"q","limit":"12.50"}',
    });
    expect(call.reason?.code).toBe('invalid_arguments');
    expect(call.reason?.issues).toEqual([
      { path: '/limit', keyword: 'type', message: 'must be integer (got string "12.50")' },
    ]);
  });

  it('does not turn a string the schema wants into a number', async () => {
    const call = await gateFor(ALL_REPAIRS).run({ name: 'search_docs', arguments: '{"query":"42"}' });
    expect(call).toMatchObject({ status: 'committed', input: { query: '42' } });
    expect(call.repairs).toBeUndefined();
  });

  it('repairs into a copy, leaving the caller’s object as it was', async () => {
    const original = { query: 'q', limit: '5' };
    const call = await gateFor(['string_scalars']).run({ name: 'search_docs', arguments: original });
    expect(call).toMatchObject({ status: 'committed', input: { query: 'q', limit: 5 } });
    expect(original.limit).toBe('5');
  });

  it('rejects a repaired value that hides a __proto__ key', async () => {
    const call = await gateFor(ALL_REPAIRS).run({
      name: 'search_docs',
      arguments: JSON.stringify('{"query":"q","__proto__":{"x":1}}'),
    });
    expect(call.reason?.issues?.[0]?.path).toBe('/__proto__');
  });
});
