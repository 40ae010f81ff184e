// The JSON Schema paths side by side on the same 1 KB order: Ajv compiled at runtime (the default),
// @cfworker/json-schema (CSP-safe, interpreted) and Ajv code generated ahead of time (CSP-safe),
// each as JSON.parse + validate, and through the gate.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Validator } from '@cfworker/json-schema';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import standaloneCode from 'ajv/dist/standalone/index.js';
import {
  AJV_OPTIONS,
  createToolGate,
  defineTool,
  precompiledJsonSchema,
} from '../packages/core/dist/index.js';
import { cfworkerJsonSchema } from '../packages/core/dist/csp.js';
import { compare, report } from './measure.mjs';
import { order, orderSchema } from './order.mjs';

const text = order(1024);
const ajv = new Ajv2020({ ...AJV_OPTIONS });
addFormats(ajv);
const ajvValidate = ajv.compile(orderSchema);
const cfworker = new Validator(orderSchema, '2020-12', false);

// Generated as CommonJS next to this file: the code `require`s Ajv's small runtime helpers
// (here for maxLength), which a bundler resolves in an app.
const generator = new Ajv2020({ ...AJV_OPTIONS, schemas: [orderSchema], code: { source: true } });
addFormats(generator);
const dir = join(dirname(fileURLToPath(import.meta.url)), '.tools');
mkdirSync(dir, { recursive: true });
const file = join(dir, 'order-validators.cjs');
writeFileSync(file, standaloneCode(generator, { order: 'order' }));
const validators = (await import(pathToFileURL(file).href)).default;
rmSync(file);

const parseWith = (validate) => (n) => {
  for (let i = 0; i < n; i++) if (!validate(JSON.parse(text))) throw new Error('invalid');
};
const viaAjv = parseWith((v) => ajvValidate(v));
const viaCfworker = parseWith((v) => cfworker.validate(v).valid);
const viaPrecompiled = parseWith((v) => validators.order(v));

const tool = defineTool({
  name: 'place_order',
  inputSchema: orderSchema,
  execute: (input) => input.items.length,
});
const throughGate = (jsonSchema) => {
  let gate;
  const run = (n) => {
    for (let i = 0; i < n; i++)
      if (gate.propose({ name: 'place_order', arguments: text }).status !== 'committed')
        throw new Error('not committed');
  };
  run.prepare = () => {
    gate = createToolGate({ tools: [tool], ...(jsonSchema ? { jsonSchema } : {}) });
  };
  return run;
};

console.log(`\nvalidators: JSON Schema paths on a ${text.length}-character order (ratio to the Ajv path)`);
console.log(`${'case'.padEnd(58)} ${'path'.padStart(10)}    ${'Ajv'.padStart(10)}   ratio`);
report(
  'JSON.parse + @cfworker/json-schema',
  compare({ subject: viaCfworker, baseline: viaAjv, n: 1000 }),
  Infinity,
);
report(
  'JSON.parse + Ajv generated at build time',
  compare({ subject: viaPrecompiled, baseline: viaAjv, n: 2000 }),
  Infinity,
);
report(
  'gate with cfworkerJsonSchema (@toolgate/core/csp)',
  compare({ subject: throughGate(cfworkerJsonSchema), baseline: throughGate(), n: 1000 }),
  Infinity,
);
report(
  'gate with precompiledJsonSchema',
  compare({ subject: throughGate(precompiledJsonSchema(validators)), baseline: throughGate(), n: 2000 }),
  Infinity,
);
