import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { chargeSchema as shopChargeSchema } from '@toolgate/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AJV_OPTIONS,
  createToolGate,
  defineTool,
  precompiledJsonSchema,
  type PrecompiledValidator,
} from '../src/index.ts';
import { createToolGate as createAjvGate } from '../src/ajv.ts';

// The shop's charge schema with an `$id`, which a build step names its generated validator by, and
// a format, which the generated code must check as the runtime validator does.
const chargeSchema = {
  ...shopChargeSchema,
  $id: 'charge',
  properties: { ...shopChargeSchema.properties, email: { type: 'string', format: 'email' } },
} as const;

let validators: Record<string, PrecompiledValidator>;
let generated: string;

beforeAll(async () => {
  // What an app's build step does: generate the validators once, ship only the generated code.
  const ajv = new Ajv2020({ ...AJV_OPTIONS, schemas: [chargeSchema], code: { source: true, esm: true } });
  addFormats(ajv);
  generated = standaloneCode(ajv, { charge: 'charge' });
  const file = join(mkdtempSync(join(tmpdir(), 'toolgate-validators-')), 'validators.mjs');
  writeFileSync(file, generated);
  validators = (await import(pathToFileURL(file).href)) as Record<string, PrecompiledValidator>;
});

const tool = () =>
  defineTool({ name: 'charge', inputSchema: chargeSchema, execute: (input) => input.amount_cents });

describe('precompiledJsonSchema', () => {
  it('validates with code generated at build time, and reports issues as the runtime Ajv validator does', async () => {
    const precompiled = createToolGate({ tools: [tool()], jsonSchema: precompiledJsonSchema(validators) });
    const runtime = createAjvGate({ tools: [tool()] });
    const bad = { amount_cents: '12.50', currency: 'GBP', email: 'nope', extra: 1 };
    const a = await precompiled.run({ name: 'charge', arguments: bad });
    const b = await runtime.run({ name: 'charge', arguments: bad });
    expect(a.reason?.issues).toEqual(b.reason?.issues);
    expect(a.reason?.issues?.map((i) => i.path).sort()).toEqual([
      '/amount_cents',
      '/currency',
      '/email',
      '/extra',
    ]);
    expect(
      (await precompiled.run({ name: 'charge', arguments: { amount_cents: 5, currency: 'USD' } })).status,
    ).toBe('committed');
  });

  it('ships code that never evaluates strings at runtime', () => {
    expect(generated).not.toMatch(/new Function|\beval\(/);
    const gateSource = ['schema/precompiled.ts', 'schema/ajv-issues.ts']
      .map((f) => readFileSync(join(import.meta.dirname, '../src', f), 'utf8'))
      .join('\n');
    expect(gateSource).not.toMatch(/from 'ajv/);
  });

  it('says what to do when a schema has no $id or no generated validator', () => {
    const noId = defineTool({ name: 'x', inputSchema: { type: 'object' }, execute: () => 1 });
    const unknown = defineTool({
      name: 'y',
      inputSchema: { $id: 'refund', type: 'object' },
      execute: () => 1,
    });
    const problems = createToolGate({
      tools: [noId, unknown],
      jsonSchema: precompiledJsonSchema(validators),
    }).check();
    expect(problems.map((problem) => problem.tool)).toEqual(['x', 'y']);
    expect(problems[0]?.message).toMatch(/give each JSON Schema an `\$id`/);
    expect(problems[1]?.message).toMatch(/no generated validator for schema "refund" \(have: charge\)/);
  });
});
