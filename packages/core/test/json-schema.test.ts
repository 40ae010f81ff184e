import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { SchemaObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  cfworkerJsonSchema,
  createCfworkerJsonSchema,
  createToolGate as createCspToolGate,
} from '../src/csp.ts';
import {
  AJV_OPTIONS,
  createToolGate,
  defineTool,
  jsonSchemaAs2020,
  precompiledJsonSchema,
  type JsonSchemaCompiler,
  type JsonSchemaObject,
  type PrecompiledValidator,
  type ToolCallRecord,
} from '../src/index.ts';
import { createAjvJsonSchema } from '../src/ajv.ts';
import { ajvJsonSchema } from '../src/kit.ts';
import { jsonSchemaDialect } from '../src/schema/dialect.ts';
import { mcpTools } from '../src/mcp.ts';

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/** Generates validators the way an app's build step does: each schema as draft 2020-12, compiled by Ajv 2020. */
async function precompiled(schemas: readonly JsonSchemaObject[]): Promise<JsonSchemaCompiler> {
  const validators: Record<string, PrecompiledValidator> = {};
  for (const [index, schema] of schemas.entries()) {
    const ajv = new Ajv2020({
      ...AJV_OPTIONS,
      schemas: [jsonSchemaAs2020(schema) as SchemaObject],
      code: { source: true, esm: true },
    });
    addFormats(ajv);
    const file = join(mkdtempSync(join(tmpdir(), 'toolgate-validators-')), `v${index}.mjs`);
    writeFileSync(file, standaloneCode(ajv, { validate: String(schema.$id) }));
    const module = (await import(pathToFileURL(file).href)) as { validate: PrecompiledValidator };
    validators[String(schema.$id)] = module.validate;
  }
  return precompiledJsonSchema(validators);
}

function run(
  jsonSchema: JsonSchemaCompiler,
  schema: JsonSchemaObject,
  args: unknown,
): Promise<ToolCallRecord> {
  const gate = createToolGate({
    tools: [defineTool({ name: 't', inputSchema: schema, execute: () => 'ok' })],
    jsonSchema,
  });
  return gate.run({ name: 't', arguments: JSON.stringify(args) });
}

const paths: [string, JsonSchemaCompiler][] = [
  ['Ajv (the default)', ajvJsonSchema],
  ['@cfworker/json-schema (the CSP entry)', cfworkerJsonSchema],
];

const tree = {
  type: 'object',
  properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
  required: ['name'],
  additionalProperties: false,
} as const;

const badTree = { name: 'root', children: [{ name: 'a', children: [{ name: 7 }] }] };

describe.each(paths)('recursive schemas compile and validate with %s', (_name, jsonSchema) => {
  it('validates a tree whose items refer to the root ("#")', async () => {
    expect(
      (await run(jsonSchema, tree, { name: 'root', children: [{ name: 'a', children: [] }] })).status,
    ).toBe('committed');
    const call = await run(jsonSchema, tree, badTree);
    expect(call.reason?.issues).toEqual([
      { path: '/children/0/children/0/name', keyword: 'type', message: 'must be string (got integer 7)' },
    ]);
  });

  it('validates a schema that refers to its own URN $id', async () => {
    const schema = {
      ...tree,
      $id: 'urn:example:tree',
      properties: { ...tree.properties, children: { type: 'array', items: { $ref: 'urn:example:tree' } } },
    } as const;
    expect((await run(jsonSchema, schema, { name: 'root', children: [{ name: 'a' }] })).status).toBe(
      'committed',
    );
    expect((await run(jsonSchema, schema, badTree)).reason?.issues).toEqual([
      { path: '/children/0/children/0/name', keyword: 'type', message: 'must be string (got integer 7)' },
    ]);
  });

  it('validates recursion through $defs', async () => {
    const schema = {
      type: 'object',
      properties: { root: { $ref: '#/$defs/node' } },
      $defs: {
        node: { type: 'object', properties: { value: { type: 'integer' }, next: { $ref: '#/$defs/node' } } },
      },
    } as const;
    expect((await run(jsonSchema, schema, { root: { value: 1, next: { value: 2 } } })).status).toBe(
      'committed',
    );
    expect(
      (await run(jsonSchema, schema, { root: { value: 1, next: { value: 'two' } } })).reason?.issues,
    ).toEqual([{ path: '/root/next/value', keyword: 'type', message: 'must be integer (got string "two")' }]);
  });

  it('keeps two tools with the same $id apart, in one gate and across gates', async () => {
    const a = {
      $id: 'https://example.com/args.json',
      type: 'object',
      properties: { n: { type: 'integer' } },
      required: ['n'],
    } as const;
    const b = {
      $id: 'https://example.com/args.json',
      type: 'object',
      properties: { s: { type: 'string' } },
      required: ['s'],
    } as const;
    const tools = [
      defineTool({ name: 'a', inputSchema: a, execute: () => 'a' }),
      defineTool({ name: 'b', inputSchema: b, execute: () => 'b' }),
    ];
    for (let round = 0; round < 2; round++) {
      const gate = createToolGate({ tools, jsonSchema });
      expect((await gate.run({ name: 'a', arguments: '{"n":1}' })).status).toBe('committed');
      expect((await gate.run({ name: 'b', arguments: '{"s":"x"}' })).status).toBe('committed');
      expect((await gate.run({ name: 'b', arguments: '{"n":1}' })).reason?.issues).toEqual([
        { path: '/s', keyword: 'required', message: 'is required' },
      ]);
    }
  });
});

describe('recursive schemas with validators generated at build time', () => {
  it('finds and runs the generated validator of a recursive schema', async () => {
    const schema = { ...tree, $id: 'urn:example:tree' };
    const jsonSchema = await precompiled([schema]);
    expect((await run(jsonSchema, schema, { name: 'root', children: [{ name: 'a' }] })).status).toBe(
      'committed',
    );
    expect((await run(jsonSchema, schema, badTree)).reason?.issues).toEqual([
      { path: '/children/0/children/0/name', keyword: 'type', message: 'must be string (got integer 7)' },
    ]);
  });
});

// What zod-to-json-schema and most MCP servers send: draft-07, where `items` as an array is a
// tuple, `$ref` overrides its siblings, and `dependencies` is a keyword.
const measure = {
  $schema: DRAFT_07,
  $id: 'measure',
  type: 'object',
  properties: {
    point: { type: 'array', items: [{ type: 'number' }, { type: 'number' }], additionalItems: false },
    unit: { $ref: '#/definitions/unit', maxLength: 1 },
    card: { type: 'string' },
    cvc: { type: 'string' },
  },
  required: ['point', 'unit'],
  dependencies: { card: ['cvc'] },
  definitions: { unit: { enum: ['m', 'ft'] } },
} as const;

describe.each([...paths, ['validators generated at build time', undefined] as const])(
  'draft-07 schemas are read as draft-07 with %s',
  (_name, given) => {
    const compiler = async () => given ?? (await precompiled([measure]));

    it('reads array-form items as a tuple and ignores the siblings of $ref', async () => {
      const jsonSchema = await compiler();
      expect((await run(jsonSchema, measure, { point: [1, 2], unit: 'ft' })).status).toBe('committed');
      const call = await run(jsonSchema, measure, { point: [1, 'two'], unit: 'yd' });
      expect(call.reason?.issues).toEqual([
        { path: '/point/1', keyword: 'type', message: 'must be number (got string "two")' },
        { path: '/unit', keyword: 'enum', message: 'must be one of "m", "ft" (got string "yd")' },
      ]);
      expect((await run(jsonSchema, measure, { point: [1, 2, 3], unit: 'm' })).status).toBe('rejected');
    });

    it('enforces dependencies', async () => {
      const jsonSchema = await compiler();
      const call = await run(jsonSchema, measure, { point: [1, 2], unit: 'm', card: '4242' });
      // Generated validators read the schema as 2020-12 writes `dependencies`.
      const keyword = given === undefined ? 'dependentRequired' : 'dependencies';
      expect(call.reason?.issues).toEqual([
        { path: '/cvc', keyword, message: 'is required when "card" is present' },
      ]);
    });
  },
);

describe.each(paths)('a draft-07 $ref stands alone with %s', (_name, jsonSchema) => {
  it('does not let a sibling $id change the base URI its $ref resolves against', async () => {
    const schema = {
      $schema: DRAFT_07,
      $id: 'http://localhost:1234/sibling_id/base/',
      definitions: {
        foo: { $id: 'http://localhost:1234/sibling_id/foo.json', type: 'string' },
        base_foo: { $id: 'foo.json', type: 'number' },
      },
      type: 'object',
      properties: { v: { allOf: [{ $id: 'http://localhost:1234/sibling_id/', $ref: 'foo.json' }] } },
    } as JsonSchemaObject;
    expect((await run(jsonSchema, schema, { v: 1 })).status).toBe('committed');
    expect((await run(jsonSchema, schema, { v: 'a' })).reason?.issues).toEqual([
      { path: '/v', keyword: 'type', message: 'must be number (got string "a")' },
    ]);
  });
});

describe('the suite\'s draft-07 "ref overrides any sibling keywords", through a whole gate', () => {
  const suite = JSON.parse(
    readFileSync(join(import.meta.dirname, 'fixtures/JSON-Schema-Test-Suite/tests/draft7/ref.json'), 'utf8'),
  ) as { description: string; schema: JsonSchemaObject; tests: { data: unknown; valid: boolean }[] }[];
  const group = suite.find((each) => each.description === 'ref overrides any sibling keywords');
  const gates = {
    '@toolgate/core/csp': createCspToolGate,
    '@toolgate/core': createToolGate,
  } as const;

  it.each(Object.keys(gates) as (keyof typeof gates)[])(
    'is decided as the suite says by %s',
    async (entry) => {
      expect(group?.tests.length).toBeGreaterThan(0);
      const schema = { $schema: DRAFT_07, ...group?.schema };
      const gate = gates[entry]({
        tools: [defineTool({ name: 't', inputSchema: schema, execute: () => 'ok' })],
      });
      for (const test of group?.tests ?? []) {
        const call = await gate.run({ name: 't', arguments: JSON.stringify(test.data) });
        expect([test.data, call.status]).toEqual([test.data, test.valid ? 'committed' : 'rejected']);
      }
    },
  );
});

describe('draft-07 tool schemas from an MCP server', () => {
  it("validates a Zod tuple the TypeScript SDK sends as draft-07 against the server's own meaning", async () => {
    const server = new McpServer({ name: 'plotter', version: '1.0.0' });
    server.registerTool('plot', { inputSchema: { at: z.tuple([z.string(), z.number()]) } }, ({ at }) => ({
      content: [{ type: 'text', text: `${at[0]}=${at[1]}` }],
    }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'toolgate-test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const tools = await mcpTools(client);
      expect(tools[0]?.inputSchema).toMatchObject({ $schema: DRAFT_07 });
      for (const gate of [createToolGate({ tools }), createCspToolGate({ tools })]) {
        expect(await gate.run({ name: 'plot', arguments: '{"at":["x",2]}' })).toMatchObject({
          status: 'committed',
          output: 'x=2',
        });
        const call = await gate.run({ name: 'plot', arguments: '{"at":["x","2"]}' });
        expect(call.reason?.issues).toEqual([
          { path: '/at/1', keyword: 'type', message: 'must be number (got string "2")' },
        ]);
      }
    } finally {
      await client.close();
    }
  });
});

describe.each(paths)('issue paths are RFC 6901 pointers with %s', (_name, jsonSchema) => {
  it('escapes only ~ and /, so a key with # or % does not collide with another', async () => {
    const keys = ['a#b', 'a%23b', 'a b', 'é', '%', 'x~y/z'];
    const schema: JsonSchemaObject = {
      type: 'object',
      properties: Object.fromEntries(keys.map((key) => [key, { type: 'integer' }])),
    };
    const call = await run(jsonSchema, schema, Object.fromEntries(keys.map((key) => [key, 'no'])));
    expect(call.reason?.issues?.map((issue) => issue.path)).toEqual([
      '/a#b',
      '/a%23b',
      '/a b',
      '/é',
      '/%',
      '/x~0y~1z',
    ]);
  });

  it('names a missing required key exactly, whatever characters it has', async () => {
    const schema = { type: 'object', required: ['say "hi"', 'two\nlines', 'a#b'] } as const;
    const call = await run(jsonSchema, schema, {});
    expect(call.reason?.issues).toEqual([
      { path: '/say "hi"', keyword: 'required', message: 'is required' },
      { path: '/two\nlines', keyword: 'required', message: 'is required' },
      { path: '/a#b', keyword: 'required', message: 'is required' },
    ]);
  });

  it('names a key another key requires (dependentRequired) and the key that requires it', async () => {
    const schema = { type: 'object', dependentRequired: { 'card#': ['cvc/2'] } } as const;
    expect((await run(jsonSchema, schema, { 'card#': '4242' })).reason?.issues).toEqual([
      { path: '/cvc~12', keyword: 'dependentRequired', message: 'is required when "card#" is present' },
    ]);
  });

  it('words a check on a property named $ref by its own schema, not as a reference', async () => {
    const schema = { type: 'object', properties: { $ref: { type: 'string' } } } as const;
    expect((await run(jsonSchema, schema, { $ref: 2 })).reason?.issues).toEqual([
      { path: '/$ref', keyword: 'type', message: 'must be string (got integer 2)' },
    ]);
  });

  it('names a failed contains once, at the array, rather than nothing or each item', async () => {
    const schema = {
      type: 'object',
      properties: { list: { type: 'array', contains: { const: 5 } } },
    } as const;
    const issues = (await run(jsonSchema, schema, { list: [1, 2] })).reason?.issues;
    expect(issues).toHaveLength(1);
    expect(issues?.[0]).toMatchObject({ path: '/list', keyword: 'contains' });
    expect(issues?.[0]?.message).toMatch(/^must contain /);
  });

  it('words a check reached through $ref by what that check expects', async () => {
    const schema = {
      type: 'object',
      properties: {
        qty: { $ref: '#/$defs/qty' },
        size: { $ref: '#/$defs/size' },
        lines: { type: 'array', items: { $ref: '#/$defs/line' } },
      },
      $defs: {
        qty: { type: 'integer', minimum: 1 },
        size: { enum: ['S', 'M'] },
        line: { type: 'object', properties: { sku: { $ref: '#/$defs/sku' } } },
        sku: { type: 'string', pattern: '^SKU-' },
      },
    } as const;
    const call = await run(jsonSchema, schema, { qty: 0, size: 'XL', lines: [{ sku: 'nope' }] });
    expect(call.reason?.issues).toEqual([
      { path: '/qty', keyword: 'minimum', message: 'must be >= 1 (got integer 0)' },
      { path: '/size', keyword: 'enum', message: 'must be one of "S", "M" (got string "XL")' },
      {
        path: '/lines/0/sku',
        keyword: 'pattern',
        message: 'must match the pattern ^SKU- (got string "nope")',
      },
    ]);
    expect((await run(jsonSchema, schema, { qty: 'one' })).reason?.issues).toEqual([
      { path: '/qty', keyword: 'type', message: 'must be integer (got string "one")' },
    ]);
  });
});

describe('which dialect a schema is read in', () => {
  it('knows each way draft-07 and 2020-12 are written, and 2020-12 without $schema', () => {
    expect(jsonSchemaDialect({ type: 'object' })).toBe('2020-12');
    for (const uri of [
      'http://json-schema.org/draft-07/schema#',
      'http://json-schema.org/draft-07/schema',
      'https://json-schema.org/draft-07/schema#',
    ]) {
      expect(jsonSchemaDialect({ $schema: uri })).toBe('draft-07');
    }
    for (const uri of [
      'https://json-schema.org/draft/2020-12/schema',
      'https://json-schema.org/draft/2020-12/schema#',
      'http://json-schema.org/draft/2020-12/schema',
    ]) {
      expect(jsonSchemaDialect({ $schema: uri })).toBe('2020-12');
    }
  });

  it('reads a schema whose $schema is a custom meta-schema in the dialect that meta-schema is written in', async () => {
    const meta = { $schema: DRAFT_07, $id: 'https://example.com/meta.json' };
    const schema = {
      $schema: 'https://example.com/meta.json',
      type: 'object',
      properties: { at: { items: [{ type: 'string' }] } },
    } as const;
    expect(jsonSchemaDialect(schema, { 'https://example.com/meta.json': meta })).toBe('draft-07');
    for (const jsonSchema of [
      createAjvJsonSchema({ schemas: { 'https://example.com/meta.json': meta } }),
      createCfworkerJsonSchema({ schemas: { 'https://example.com/meta.json': meta } }),
    ]) {
      expect((await run(jsonSchema, schema, { at: ['x', 2] })).status).toBe('committed');
      expect((await run(jsonSchema, schema, { at: [1] })).reason?.issues).toEqual([
        { path: '/at/0', keyword: 'type', message: 'must be string (got integer 1)' },
      ]);
    }
  });
});

describe.each([
  ['Ajv', createAjvJsonSchema],
  ['@cfworker/json-schema', createCfworkerJsonSchema],
])('schemas given by URI to the %s compiler', (_name, create) => {
  it('lets a tool schema $ref them, and words their checks as they expect', async () => {
    const address = {
      type: 'object',
      properties: { zip: { type: 'string', pattern: '^[0-9]{5}$' } },
      required: ['zip'],
    } as const;
    const jsonSchema = create({ schemas: { 'https://example.com/address.json': address } });
    const schema: JsonSchemaObject = {
      type: 'object',
      properties: { ship_to: { $ref: 'https://example.com/address.json' } },
      required: ['ship_to'],
    };
    expect((await run(jsonSchema, schema, { ship_to: { zip: '12345' } })).status).toBe('committed');
    expect((await run(jsonSchema, schema, { ship_to: { zip: 'N1' } })).reason?.issues).toEqual([
      {
        path: '/ship_to/zip',
        keyword: 'pattern',
        message: 'must match the pattern ^[0-9]{5}$ (got string "N1")',
      },
    ]);
    const tool = defineTool({ name: 't', inputSchema: schema, execute: () => 1 });
    const unaware = createToolGate({ tools: [tool], jsonSchema: create() });
    expect(unaware.check()).toEqual([{ tool: 't', message: expect.stringMatching(/does not compile/) }]);
    expect(unaware.propose({ name: 't', arguments: '{}' }).reason).toMatchObject({
      code: 'tool_unavailable',
    });
  });

  it('reads one written in draft-07 as draft-07: a $ref in it ignores its siblings at any depth, whatever dialect refers to it', async () => {
    const list = {
      $schema: DRAFT_07,
      definitions: { tags: { type: 'array', items: { type: 'string' } } },
      properties: { tags: { $ref: '#/definitions/tags', maxItems: 2 } },
    } as const;
    const jsonSchema = create({ schemas: { 'https://example.com/list.json': list } });
    const from2020: JsonSchemaObject = { properties: { post: { $ref: 'https://example.com/list.json' } } };
    const fromDraft07: JsonSchemaObject = { $schema: DRAFT_07, ...from2020 };
    for (const schema of [from2020, fromDraft07]) {
      expect((await run(jsonSchema, schema, { post: { tags: ['a', 'b', 'c'] } })).status).toBe('committed');
      expect((await run(jsonSchema, schema, { post: { tags: ['a', 2] } })).reason?.issues).toEqual([
        { path: '/post/tags/1', keyword: 'type', message: 'must be string (got integer 2)' },
      ]);
    }
  });
});
