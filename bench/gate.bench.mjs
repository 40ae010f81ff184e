// The gate's end-to-end cost per call (read, limits, parse, validate, execute, commit, records,
// audit) against the least any app must do: JSON.parse plus the same validator. The targets are
// for the Ajv path (`@toolgate/core/ajv`), where the validator is fastest and the gate's own share
// shows most; the default path's rows use @cfworker/json-schema on both sides.
import { Validator } from '@cfworker/json-schema';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { AJV_OPTIONS, createToolGate, defineTool } from '../packages/core/dist/ajv.js';
import { createToolGate as createDefaultGate } from '../packages/core/dist/index.js';
import { createStore } from 'zustand/vanilla';
import { compare, load, report } from './measure.mjs';
import { order, orderSchema } from './order.mjs';

/** The same Ajv options the gate uses, so both sides run the same compiled validator code. */
function compileBaseline(schema) {
  const ajv = new Ajv2020({ ...AJV_OPTIONS });
  addFormats(ajv);
  return ajv.compile(schema);
}

function placeOrder(name = 'place_order', schema = orderSchema) {
  return defineTool({
    name,
    inputSchema: schema,
    execute: (input) => ({ order_id: 'ord_1', lines: input.items.length }),
    commit: (state, output) => ({ orders: state.orders + 1, lines: state.lines + output.lines }),
  });
}

function newGate(tools, create = createToolGate) {
  const store = createStore(() => ({ orders: 0, lines: 0 }));
  return create({ tools, store });
}

/** A gate whose schemas are compiled already: compiling is setup, done before the timing. */
function readyGate(tools, create = createToolGate) {
  const gate = newGate(tools, create);
  gate.check();
  return gate;
}

/**
 * Runs `n` calls through a gate. `makeGate` runs in `prepare`, before each round and outside the
 * timing, so a round can start from a fresh gate (compiling schemas is setup, not per-call cost).
 */
function gateRunner(text, makeGate, name = 'place_order') {
  let gate;
  const run = (n) => {
    for (let i = 0; i < n; i++) {
      const call = gate.propose({ name, arguments: text });
      if (call.status !== 'committed')
        throw new Error(`bench call ended ${call.status}: ${call.reason?.message}`);
    }
  };
  run.prepare = () => {
    gate = makeGate();
  };
  return run;
}

function baselineRunner(text, validate) {
  return (n) => {
    for (let i = 0; i < n; i++) {
      const value = JSON.parse(text);
      if (!validate(value)) throw new Error('baseline input invalid');
    }
  };
}

console.log('\ngate: end-to-end cost per call (median of interleaved rounds)');
load('at the start');
console.log(`${'case'.padEnd(58)} ${'gate'.padStart(10)}    ${'baseline'.padStart(10)}   ratio`);
const validate = compileBaseline(orderSchema);
let ok = true;

for (const [label, size, n, target] of [
  ['1 KB arguments vs JSON.parse + Ajv', 1024, 2000, 2],
  ['50 KB arguments vs JSON.parse + Ajv', 50 * 1024, 60, 1.2],
]) {
  const text = order(size);
  const sides = {
    subject: gateRunner(text, () => readyGate([placeOrder()])),
    baseline: baselineRunner(text, validate),
    n,
  };
  ok = report(`${label} (${text.length} chars)`, compare({ ...sides, collect: false }), target) && ok;
  // The same with a full collection before each round, which makes the gate's code re-warm (see `compare`).
  report(`  the same, each round after a full collection`, compare(sides), Infinity);
}

{
  // The default path (`@toolgate/core`): @cfworker/json-schema, an interpreter, on both sides.
  const validator = new Validator(orderSchema, '2020-12', false);
  const validate = (value) => validator.validate(value).valid;
  for (const [label, size, n] of [
    ['1 KB arguments, default path vs JSON.parse + cfworker', 1024, 500],
    ['50 KB arguments, default path vs JSON.parse + cfworker', 50 * 1024, 10],
  ]) {
    const text = order(size);
    const sides = {
      subject: gateRunner(text, () => readyGate([placeOrder()], createDefaultGate)),
      baseline: baselineRunner(text, validate),
      n,
    };
    report(label, compare({ ...sides, collect: false }), Infinity);
  }
}

{
  // A file-writing tool: 50 KB of text in one string. The pre-parse depth scan skips strings with
  // indexOf, so its cost here is small; on record-heavy JSON (above) it is about a third of a parse.
  const schema = {
    type: 'object',
    properties: { path: { type: 'string' }, content: { type: 'string' } },
    required: ['path', 'content'],
    additionalProperties: false,
  };
  const paragraph = 'Revenue grew 12% while operating costs fell; the "north" region led. \\n';
  const text = JSON.stringify({
    path: 'notes/summary.md',
    content: paragraph.repeat(Math.ceil((50 * 1024) / paragraph.length)),
  });
  const writeFile = defineTool({
    name: 'write_file',
    inputSchema: schema,
    execute: (input) => input.content.length,
  });
  const validate = compileBaseline(schema);
  const sides = {
    subject: gateRunner(
      text,
      () => {
        const gate = createToolGate({ tools: [writeFile] });
        gate.check();
        return gate;
      },
      'write_file',
    ),
    baseline: baselineRunner(text, validate),
    n: 200,
  };
  ok =
    report(
      `50 KB text arguments (a file's content) vs JSON.parse + Ajv`,
      compare({ ...sides, collect: false }),
      1.2,
    ) && ok;
  report(`  the same, each round after a full collection`, compare(sides), Infinity);
}

{
  const text = order(1024);
  const many = [placeOrder('place_order')];
  for (let i = 1; i < 1000; i++) many.push(placeOrder(`tool_${i}`));
  // Both gates are made once and keep their calls: this row is the cost per call, not per gate.
  const big = newGate(many);
  const small = newGate([placeOrder()]);
  ok =
    report(
      '1,000 registered tools vs 1 (1 KB call)',
      compare({ subject: gateRunner(text, () => big), baseline: gateRunner(text, () => small), n: 2000 }),
      1.15,
    ) && ok;
}

{
  // A gate is often made with every tool an MCP server lists, and the model calls few of them: a
  // tool's schemas are compiled on its first call, so a gate of 1,000 tools is ready about as soon
  // as a gate of one (compiling 1,000 schemas up front took seconds). Each gate gets new schema
  // objects, so that no validator compiled for an earlier round is reused.
  const text = order(1024);
  const starter = (count) => {
    let toolSets = [];
    const run = (n) => {
      for (let i = 0; i < n; i++) {
        const call = newGate(toolSets[i]).propose({ name: 'place_order', arguments: text });
        if (call.status !== 'committed')
          throw new Error(`bench call ended ${call.status}: ${call.reason?.message}`);
      }
    };
    // Small schemas for the tools the call does not use, as an MCP server's often are (and less
    // garbage for the collector to take during the timing).
    const otherTool = (i) =>
      defineTool({
        name: `tool_${i}`,
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        execute: () => i,
      });
    run.prepare = () => {
      toolSets = Array.from({ length: 5 }, () =>
        Array.from({ length: count }, (_, i) =>
          i === 0 ? placeOrder('place_order', structuredClone(orderSchema)) : otherTool(i),
        ),
      );
    };
    return run;
  };
  ok =
    report(
      'a gate of 1,000 tools vs 1: create it, answer its first call',
      compare({ subject: starter(1000), baseline: starter(1), n: 5, rounds: 9 }),
      2,
    ) && ok;
}

{
  const text = order(1024);
  const seasoned = newGate([placeOrder()]);
  for (let i = 0; i < 10_000; i++) seasoned.propose({ name: 'place_order', arguments: text });
  const fresh = () => newGate([placeOrder()]);
  // The fresh side gets a new gate each round; the seasoned one keeps its 10,000 settled calls (and grows).
  ok =
    report(
      'after 10,000 settled calls vs a fresh gate (1 KB call)',
      compare({ subject: gateRunner(text, () => seasoned), baseline: gateRunner(text, fresh), n: 500 }),
      1.2,
    ) && ok;
}

load('at the end');
if (!ok) process.exitCode = 1;
