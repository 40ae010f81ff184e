// The official JSON-Schema-Test-Suite (draft 2020-12 and draft-07), run through each JSON Schema
// path of the gate and through the plain library behind it. The gate must decide every case as
// the plain library does, except the cases listed below where it is stricter by design; the counts
// of cases the plain libraries themselves get wrong are pinned, so that a change in either shows.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { Validator, type Schema, type SchemaDraft } from '@cfworker/json-schema';
import Ajv, { type AnySchema, type Options, type SchemaObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import draft07MetaSchema from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
import standaloneCode from 'ajv/dist/standalone/index.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCfworkerJsonSchema } from '../src/csp.ts';
import {
  AJV_OPTIONS,
  createToolGate,
  defineTool,
  jsonSchemaAs2020,
  precompiledJsonSchema,
  type JsonSchemaCompiler,
  type JsonSchemaObject,
  type PrecompiledValidator,
} from '../src/index.ts';
import { createAjvJsonSchema } from '../src/ajv.ts';
import { compileSchema } from '../src/schema/schema.ts';
import { BUILD_TIME_VALIDATOR, buildTimeOnlyJsonSchema, preferBuildTime } from '../src/schema/build-time.ts';
import { generateValidator } from '../src/schema/generate.ts';

const SUITE = join(import.meta.dirname, 'fixtures/JSON-Schema-Test-Suite');
const REMOTE = 'http://localhost:1234/';

type Dialect = 'draft2020-12' | 'draft7';
type PathName = 'ajv' | 'cfworker' | 'precompiled' | 'build-time';
/** What a validator made of one case: its answer, or that it threw (compiling or validating). */
type Decision = 'valid' | 'invalid' | 'error';

interface Case {
  readonly id: string;
  readonly group: number;
  readonly data: unknown;
  readonly valid: boolean;
}
interface Group {
  readonly schema: JsonSchemaObject | boolean;
  readonly cases: Case[];
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function load(dialect: Dialect): Group[] {
  const groups: Group[] = [];
  for (const file of filesUnder(join(SUITE, 'tests', dialect))) {
    const name = relative(join(SUITE, 'tests', dialect), file);
    for (const group of JSON.parse(readFileSync(file, 'utf8')) as {
      description: string;
      schema: JsonSchemaObject | boolean;
      tests: { description: string; data: unknown; valid: boolean }[];
    }[]) {
      const index = groups.length;
      groups.push({
        schema: group.schema,
        cases: group.tests.map((test) => ({
          id: `${dialect}/${name}: ${group.description}: ${test.description}`,
          group: index,
          data: test.data,
          valid: test.valid,
        })),
      });
    }
  }
  return groups;
}

/** The remote schemas a dialect's tests refer to, by the URI the suite serves them under. */
function remotes(dialect: Dialect): Record<string, JsonSchemaObject> {
  const text = filesUnder(join(SUITE, 'tests', dialect))
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  const found: Record<string, JsonSchemaObject> = {};
  for (const file of filesUnder(join(SUITE, 'remotes'))) {
    const path = relative(join(SUITE, 'remotes'), file);
    const folder = path.includes('/') ? path.slice(0, path.indexOf('/')) : '';
    const forOtherDraft = /^(draft|v1)/.test(folder) && folder !== dialect;
    if (forOtherDraft && !text.includes(REMOTE + path)) continue;
    found[REMOTE + path] = JSON.parse(readFileSync(file, 'utf8')) as JsonSchemaObject;
  }
  return found;
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// ---- the plain libraries, as an app would use them on their own --------------------------------

function plainAjv(dialect: Dialect, remote: Record<string, JsonSchemaObject>) {
  const options = { strict: false, logger: false } as const;
  const ajv = dialect === 'draft7' ? new Ajv(options) : new Ajv2020(options);
  addFormats(ajv);
  for (const [uri, schema] of Object.entries(remote))
    ajv.addSchema(schema as AnySchema, uri, undefined, false);
  return (schema: JsonSchemaObject | boolean) => {
    try {
      const validate = ajv.compile(schema as SchemaObject);
      return (data: unknown): Decision => {
        try {
          return validate(data) ? 'valid' : 'invalid';
        } catch {
          return 'error';
        }
      };
    } catch {
      return (): Decision => 'error';
    }
  };
}

function plainCfworker(dialect: Dialect, remote: Record<string, JsonSchemaObject>) {
  const draft: SchemaDraft = dialect === 'draft7' ? '7' : '2020-12';
  return (schema: JsonSchemaObject | boolean) => {
    try {
      const validator = new Validator(schema as Schema, draft, false);
      for (const [uri, extra] of Object.entries(remote)) validator.addSchema(extra as Schema, uri);
      return (data: unknown): Decision => {
        try {
          return validator.validate(data).valid ? 'valid' : 'invalid';
        } catch {
          return 'error';
        }
      };
    } catch {
      return (): Decision => 'error';
    }
  };
}

// ---- the gate's paths -------------------------------------------------------------------------

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/** The suite's draft-07 schemas leave `$schema` out; a real draft-07 schema names it, and the gate reads it. */
function asWritten(dialect: Dialect, schema: JsonSchemaObject | boolean): JsonSchemaObject | boolean {
  return dialect === 'draft7' && isObject(schema) && schema['$schema'] === undefined
    ? { $schema: DRAFT_07, ...schema }
    : schema;
}

const require = createRequire(import.meta.url);

/** The build step for `precompiledJsonSchema`: the schema as 2020-12, generated by Ajv 2020. */
function precompiledCompiler(remote: Record<string, JsonSchemaObject>): JsonSchemaCompiler {
  const generated = new WeakMap<object, ReturnType<JsonSchemaCompiler>>();
  const ajvWith = (options: Options) => {
    const ajv = new Ajv2020({ ...AJV_OPTIONS, ...options });
    addFormats(ajv);
    // Some schemas refer to the draft-07 meta-schema; a build step registers what its schemas refer to.
    ajv.addMetaSchema(draft07MetaSchema);
    for (const [uri, extra] of Object.entries(remote))
      ajv.addSchema(extra as AnySchema, uri, undefined, false);
    return ajv;
  };
  // Checking each schema against the meta-schema once, here, keeps generating fast (a build step
  // with all its schemas in one Ajv pays for that once too).
  const checker = ajvWith({});
  return (schema) => {
    if (typeof schema !== 'object') return precompiledJsonSchema({})(schema);
    const known = generated.get(schema);
    if (known !== undefined) return known;
    const written = jsonSchemaAs2020(schema, remote);
    if (!checker.validateSchema(written as AnySchema))
      throw new Error(`schema is invalid: ${checker.errorsText(checker.errors)}`);
    const ajv = ajvWith({ code: { source: true }, validateSchema: false });
    ajv.addSchema(written as AnySchema, String(schema.$id));
    const module = { exports: {} as Record<string, PrecompiledValidator> };
    // The generated module is CommonJS here; an app writes it to a file and bundles it.
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    new Function('module', 'exports', 'require', standaloneCode(ajv, { validate: String(schema.$id) }))(
      module,
      module.exports,
      require,
    );
    const check = precompiledJsonSchema({
      [String(schema.$id)]: module.exports['validate'] as PrecompiledValidator,
    })(schema);
    generated.set(schema, check);
    return check;
  };
}

/** `precompiledJsonSchema` finds a schema's validator by its `$id`, so a schema without one is given one. */
function withId(schema: JsonSchemaObject | boolean, group: number): JsonSchemaObject | boolean {
  return isObject(schema) && typeof schema['$id'] !== 'string'
    ? { $id: `urn:toolgate-suite:${group}`, ...schema }
    : schema;
}

/**
 * What the Vite plugin does to a schema it reads in an app's source: generate its validator (the
 * same function, with the same schemas it is given) and give it to the schema, for a gate of
 * `@toolgate/core/compiled`, which has no validator of its own.
 */
function withBuildTimeValidator(remote: Record<string, JsonSchemaObject>) {
  return (schema: JsonSchemaObject | boolean): JsonSchemaObject | boolean => {
    if (!isObject(schema)) return schema;
    let source;
    try {
      source = generateValidator(schema, { schemas: remote });
    } catch {
      return schema; // the plugin fails the build; here the gate then refuses the tool
    }
    const module = { exports: {} as unknown };
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    new Function('module', 'exports', 'require', source)(module, module.exports, require);
    return Object.defineProperty(schema, Symbol.for(BUILD_TIME_VALIDATOR), {
      value: { validate: module.exports, json: JSON.stringify(schema) },
    });
  };
}

function gatePaths(remote: Record<string, JsonSchemaObject>): Record<
  PathName,
  {
    compiler: JsonSchemaCompiler;
    schema: (schema: JsonSchemaObject | boolean, group: number) => JsonSchemaObject | boolean;
  }
> {
  return {
    ajv: { compiler: createAjvJsonSchema({ schemas: remote }), schema: (schema) => schema },
    cfworker: { compiler: createCfworkerJsonSchema({ schemas: remote }), schema: (schema) => schema },
    precompiled: { compiler: precompiledCompiler(remote), schema: withId },
    'build-time': {
      compiler: preferBuildTime(buildTimeOnlyJsonSchema),
      schema: withBuildTimeValidator(remote),
    },
  };
}

/** The decision of the validate function the gate compiles (what it checks every call with). */
function throughCompiler(compiler: JsonSchemaCompiler, schema: JsonSchemaObject | boolean) {
  try {
    const validate = compileSchema(schema as JsonSchemaObject, compiler);
    return (data: unknown): Decision => {
      try {
        const result = validate(data);
        if (result instanceof Promise) throw new Error('a JSON Schema check answered asynchronously');
        return result.ok ? 'valid' : 'invalid';
      } catch {
        return 'error';
      }
    };
  } catch {
    return (): Decision => 'error';
  }
}

/** The decision of a whole gate, for arguments sent as a model sends them (JSON text). */
async function throughGate(
  compiler: JsonSchemaCompiler,
  schema: JsonSchemaObject | boolean,
  data: unknown,
): Promise<Decision | 'forbidden key'> {
  let gate;
  try {
    gate = createToolGate({
      tools: [defineTool({ name: 't', inputSchema: schema as JsonSchemaObject, execute: () => 'ok' })],
      jsonSchema: compiler,
    });
  } catch {
    return 'error';
  }
  const call = await gate.run({ name: 't', arguments: JSON.stringify(data) });
  if (call.status === 'committed') return 'valid';
  // A schema that does not compile refuses every call of its tool (the gate compiles it on first use).
  if (call.reason?.code === 'tool_unavailable') return 'error';
  const issues = call.reason?.issues ?? [];
  if (issues.some((issue) => issue.keyword === 'forbidden')) return 'forbidden key';
  if (issues.some((issue) => issue.message.startsWith('the validator threw'))) return 'error';
  if (call.reason?.code !== 'invalid_arguments')
    throw new Error(`unexpected rejection: ${call.reason?.code}: ${call.reason?.message}`);
  return 'invalid';
}

// ---- the comparison ---------------------------------------------------------------------------

interface Disagreement {
  readonly id: string;
  readonly plain: Decision;
  readonly gate: Decision | 'forbidden key';
  /** Whether the gate's answer is the one the suite expects. */
  readonly gateRight: boolean;
}

interface Tally {
  total: number;
  plainPassed: number;
  gatePassed: number;
  /** Cases (with object data) also run through a whole gate. */
  gateRuns: number;
  /** Cases where the compiled check and the plain library disagree. */
  check: Disagreement[];
  /** Cases where a whole gate and the plain library disagree. */
  gate: Disagreement[];
}

const tallies: Partial<Record<`${PathName} ${Dialect}`, Tally>> = {};

async function compare(path: PathName, dialect: Dialect): Promise<Tally> {
  const groups = load(dialect);
  const remote = remotes(dialect);
  const plain =
    path === 'cfworker' ? plainCfworker(dialect, clone(remote)) : plainAjv(dialect, clone(remote));
  const gate = gatePaths(clone(remote))[path];
  const tally: Tally = { total: 0, plainPassed: 0, gatePassed: 0, gateRuns: 0, check: [], gate: [] };
  for (const [index, group] of groups.entries()) {
    const expected = plain(clone(group.schema));
    const schema = gate.schema(asWritten(dialect, clone(group.schema)), index);
    const checked = throughCompiler(gate.compiler, schema);
    for (const test of group.cases) {
      const answer = test.valid ? 'valid' : 'invalid';
      const plainSays = expected(clone(test.data));
      const gateSays = checked(clone(test.data));
      tally.total++;
      if (plainSays === answer) tally.plainPassed++;
      if (gateSays === answer) tally.gatePassed++;
      if (gateSays !== plainSays)
        tally.check.push({ id: test.id, plain: plainSays, gate: gateSays, gateRight: gateSays === answer });
      // A tool's input schema is an object (defineTool refuses `true`/`false`); those run through the check alone.
      if (isObject(test.data) && isObject(group.schema)) {
        tally.gateRuns++;
        const whole = await throughGate(gate.compiler, schema, clone(test.data));
        if (whole !== plainSays)
          tally.gate.push({ id: test.id, plain: plainSays, gate: whole, gateRight: whole === answer });
      }
    }
  }
  tallies[`${path} ${dialect}`] = tally;
  return tally;
}

const NAMES = 'properties whose names are Javascript object property names';

// Stricter by design: a gate refuses any `__proto__` key before validating (a tool that merges its
// input into an object could otherwise change a prototype); the suite reads them as ordinary keys.
const PROTO_KEY = [
  `properties.json: ${NAMES}: __proto__ not valid`,
  `properties.json: ${NAMES}: all present and valid`,
  `required.json: required ${NAMES}: __proto__ present`,
  `required.json: required ${NAMES}: all present`,
];

// The gate compiles Ajv with `ownProperties: true`: a key an object inherits (`toString`,
// `constructor`) is not one of its properties, as the suite expects; plain Ajv counts inherited keys.
const OWN_PROPERTIES = [
  `properties.json: ${NAMES}: none of the properties mentioned`,
  `required.json: required ${NAMES}: none of the properties mentioned`,
  `required.json: required ${NAMES}: __proto__ present`,
  `required.json: required ${NAMES}: toString present`,
  `required.json: required ${NAMES}: constructor present`,
];
// With `ownProperties`, Ajv skips a `properties` entry named `__proto__`, so the check alone accepts
// `{"__proto__": "foo"}`, which the suite refuses; a gate never gets there (PROTO_KEY refuses it first).
const OWN_PROPERTIES_PROTO = [`properties.json: ${NAMES}: __proto__ not valid`];

// Draft-07 ignores the siblings of `$ref`; Ajv applies them. The gate reads draft-07 as draft-07
// (the Ajv path drops the siblings, the precompiled build step writes the schema as 2020-12).
const REF_ALONE = [
  'ref.json: ref overrides any sibling keywords: ref valid, maxItems ignored',
  'ref.json: $ref prevents a sibling $id from changing the base uri: $ref resolves to /definitions/base_foo, data does not validate',
  'ref.json: $ref prevents a sibling $id from changing the base uri: $ref resolves to /definitions/base_foo, data validates',
];

// The precompiled build step generates with Ajv 2020, which reads a later-draft schema that a
// draft-07 schema refers to as that later draft, as the suite expects; Ajv's draft-07 class does not.
const CROSS_DRAFT = [
  'optional/cross-draft.json: refs to future drafts are processed as future drafts: missing bar is invalid',
];

// The precompiled build step writes a schema as 2020-12 without its custom meta-schema, so Ajv
// generates the schemas whose meta-schema asks for the format-assertion vocabulary, which plain
// Ajv refuses to compile.
const FORMAT_ASSERTION = [
  'optional/format-assertion.json: schema that uses custom metaschema with format-assertion: false: format-assertion: false: valid string',
  'optional/format-assertion.json: schema that uses custom metaschema with format-assertion: false: format-assertion: false: invalid string',
  'optional/format-assertion.json: schema that uses custom metaschema with format-assertion: true: format-assertion: true: valid string',
  'optional/format-assertion.json: schema that uses custom metaschema with format-assertion: true: format-assertion: true: invalid string',
];

/** Every case where the gate's check may differ from the plain library, on one path and dialect. */
function expectedDifferences(path: PathName, dialect: Dialect): string[] {
  // @cfworker/json-schema ignores a draft-07 `$ref`'s siblings, except a sibling `$id`.
  if (path === 'cfworker')
    return dialect === 'draft7'
      ? REF_ALONE.filter((id) => id.includes('sibling $id')).map((id) => `${dialect}/${id}`)
      : [];
  const ids = [...OWN_PROPERTIES, ...OWN_PROPERTIES_PROTO];
  if (dialect === 'draft7') ids.push(...REF_ALONE);
  // The Vite plugin generates as the precompiled build step does.
  if (path === 'precompiled' || path === 'build-time')
    ids.push(...(dialect === 'draft7' ? CROSS_DRAFT : FORMAT_ASSERTION));
  return ids.map((id) => `${dialect}/${id}`);
}

// How many suite cases the plain library behind each path decides against the suite (features it
// does not support, such as `$dynamicRef` in @cfworker/json-schema, format assertions, or the
// cases above). A change here means a library or the suite changed: look at which cases moved.
const PLAIN_FAILS: Record<`${PathName} ${Dialect}`, number> = {
  'ajv draft2020-12': 199,
  'ajv draft7': 121,
  'cfworker draft2020-12': 146,
  'cfworker draft7': 109,
  'precompiled draft2020-12': 199,
  'precompiled draft7': 121,
  'build-time draft2020-12': 199,
  'build-time draft7': 121,
};

// Ajv tells the developer once per schema that it does not check a format it does not know
// (`idn-email`); the suite has dozens of those, which would bury the counts printed below.
beforeAll(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  return () => vi.restoreAllMocks();
});

describe.each(['draft2020-12', 'draft7'] as const)('the JSON-Schema-Test-Suite, %s', (dialect) => {
  it.each(['ajv', 'cfworker', 'precompiled', 'build-time'] as const)(
    'is decided by the %s path as by its plain library, or better',
    async (path) => {
      const tally = await compare(path, dialect);
      const allowed = expectedDifferences(path, dialect);
      const proto = PROTO_KEY.map((id) => `${dialect}/${id}`);
      expect(tally.total - tally.plainPassed).toBe(PLAIN_FAILS[`${path} ${dialect}`]);

      // The check the gate compiles: the same answers, except the listed cases, where it is right.
      expect(tally.check.map((d) => d.id).sort()).toEqual([...allowed].sort());
      const wrong = OWN_PROPERTIES_PROTO.map((id) => `${dialect}/${id}`);
      expect(tally.check.filter((d) => !d.gateRight).map((d) => d.id)).toEqual(
        path === 'cfworker' ? [] : wrong,
      );

      // A whole gate: the same again, and stricter on `__proto__` keys.
      const gateIds = tally.gate.map((d) => d.id);
      expect(new Set(gateIds).size).toBe(gateIds.length);
      for (const d of tally.gate) {
        if (proto.includes(d.id)) expect(d.gate).toBe('forbidden key');
        else {
          expect(allowed).toContain(d.id);
          expect(d.gateRight).toBe(true);
        }
      }
      expect(gateIds.filter((id) => proto.includes(id)).sort()).toEqual([...proto].sort());
      expect(tally.gatePassed).toBeGreaterThanOrEqual(tally.plainPassed);
      // A few thousand cases, each through a whole gate too: seconds, not the default five.
    },
    60_000,
  );
});

afterAll(() => {
  const rows = Object.entries(tallies).map(([name, t]) => ({
    path: name,
    'plain vs suite': `${t.plainPassed}/${t.total}`,
    'gate vs suite': `${t.gatePassed}/${t.total}`,
    'check agrees with plain': `${t.total - t.check.length}/${t.total}`,
    'whole gate agrees with plain (object data)': `${t.gateRuns - t.gate.length}/${t.gateRuns}`,
  }));
  console.table(rows);
});

describe('a draft-07 schema a tool refers to by URI', () => {
  // The suite's case, with the schema moved to where an app keeps a shared one: the `schemas` option.
  const [group] = load('draft7').filter((g) =>
    g.cases.some((c) => c.id.endsWith('ref overrides any sibling keywords: ref valid, maxItems ignored')),
  );
  const HELD = 'http://localhost:1234/held/ref-siblings.json';
  const held = { [HELD]: { $schema: DRAFT_07, $id: HELD, ...(group?.schema as JsonSchemaObject) } };

  it.each([
    ['draft-07', { $schema: DRAFT_07, $ref: HELD }],
    ['draft-07 by its own $schema, from a 2020-12 schema', { $ref: HELD }],
  ])('is read as draft-07 by the Vite plugin (%s): its $ref siblings are ignored', (_, root) => {
    for (const path of ['ajv', 'build-time'] as const) {
      const gate = gatePaths(clone(held))[path];
      const check = throughCompiler(gate.compiler, gate.schema(clone(root), 0));
      const answers = group?.cases.map((c) => [c.id, check(clone(c.data))]);
      expect(answers, path).toEqual(group?.cases.map((c) => [c.id, c.valid ? 'valid' : 'invalid']));
    }
  });
});
