/**
 * A gate of many tools starts fast: a tool's schemas are compiled on its first call, and a schema
 * that does not compile is still reported clearly, by `gate.check()` or as a `rejected` record.
 */
import { describe, expect, it, vi } from 'vitest';
import { ajvJsonSchema, outcomeText } from '../src/kit.ts';
import { createToolGate, defineTool, type JsonSchemaCompiler, type ToolSchema } from '../src/index.ts';

const broken = { type: 'object', properties: { a: { type: 'nonsense' } } } as unknown as ToolSchema;

function counting(): { compiler: JsonSchemaCompiler; compiled: () => number } {
  let count = 0;
  return {
    compiler: (schema) => {
      count++;
      return ajvJsonSchema(schema);
    },
    compiled: () => count,
  };
}

describe('schemas are compiled on a tool’s first call', () => {
  it('compiles nothing when the gate is created, and each tool once, when it is first called', async () => {
    const { compiler, compiled } = counting();
    const tools = Array.from({ length: 50 }, (_, i) =>
      defineTool({
        name: `t${i}`,
        inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
        outputSchema: { type: 'string' },
        execute: () => 'ok',
      }),
    );
    const gate = createToolGate({ tools, jsonSchema: compiler });
    expect(compiled()).toBe(0);
    expect((await gate.run({ name: 't7', arguments: '{"n":1}' })).status).toBe('committed');
    expect(compiled()).toBe(2);
    expect((await gate.run({ name: 't7', arguments: '{"n":"x"}' })).reason?.code).toBe('invalid_arguments');
    expect(compiled()).toBe(2);
  });

  it('creates a gate with a schema that does not compile', () => {
    const tool = defineTool({ name: 'bad', inputSchema: broken, execute: () => 1 });
    expect(() => createToolGate({ tools: [tool] })).not.toThrow();
  });
});

describe('a schema that does not compile is reported clearly', () => {
  it('rejects a call of the tool as tool_unavailable, naming the tool and the schema error; nothing runs', async () => {
    const execute = vi.fn(() => 1);
    const gate = createToolGate({
      tools: [
        defineTool({ name: 'bad', inputSchema: broken, execute }),
        defineTool({ name: 'good', inputSchema: { type: 'object' }, execute: () => 2 }),
      ],
    });
    const call = await gate.run({ name: 'bad', arguments: '{}' });
    expect(call.status).toBe('rejected');
    expect(call.reason?.code).toBe('tool_unavailable');
    expect(call.reason?.message).toMatch(
      /^the input schema of tool "bad" does not compile: schema is invalid: data\/properties\/a\/type/,
    );
    expect(execute).not.toHaveBeenCalled();
    expect(outcomeText(call)).toMatch(/\(tool_unavailable\)[\s\S]*Do not call "bad" again/);
    expect((await gate.run({ name: 'good', arguments: '{}' })).status).toBe('committed');
  });

  it('rejects a call when only the output schema does not compile, before the tool runs', async () => {
    const execute = vi.fn(() => 1);
    const gate = createToolGate({
      tools: [defineTool({ name: 'bad', inputSchema: { type: 'object' }, outputSchema: broken, execute })],
    });
    const call = await gate.run({ name: 'bad', arguments: '{}' });
    expect(call.reason?.code).toBe('tool_unavailable');
    expect(call.reason?.message).toMatch(/^the output schema of tool "bad" does not compile/);
    expect(execute).not.toHaveBeenCalled();
  });

  it('rejects a call of a tool whose Standard Schema has no validate function', async () => {
    const notStandard = { '~standard': { version: 1, vendor: 'x' } } as unknown as ToolSchema;
    const gate = createToolGate({
      tools: [defineTool({ name: 'odd', inputSchema: notStandard, execute: () => 1 })],
    });
    const call = await gate.run({ name: 'odd', arguments: '{}' });
    expect(call.reason?.code).toBe('tool_unavailable');
    expect(call.reason?.message).toMatch(/input schema of tool "odd" does not compile: .*validate/);
  });

  it('gate.check() compiles every schema and lists each problem, naming the tool', () => {
    const gate = createToolGate({
      tools: [
        defineTool({ name: 'good', inputSchema: { type: 'object' }, execute: () => 1 }),
        defineTool({ name: 'bad_in', inputSchema: broken, execute: () => 1 }),
        defineTool({
          name: 'bad_out',
          inputSchema: { type: 'object' },
          outputSchema: broken,
          execute: () => 1,
        }),
      ],
    });
    const problems = gate.check();
    expect(problems.map((p) => p.tool)).toEqual(['bad_in', 'bad_out']);
    expect(problems[0]?.message).toMatch(/^the input schema of tool "bad_in" does not compile: /);
    expect(problems[1]?.message).toMatch(/^the output schema of tool "bad_out" does not compile: /);
  });

  it('gate.check() lists nothing for a gate whose schemas all compile, and compiles each once', async () => {
    const { compiler, compiled } = counting();
    const gate = createToolGate({
      tools: [defineTool({ name: 'a', inputSchema: { type: 'object' }, execute: () => 1 })],
      jsonSchema: compiler,
    });
    expect(gate.check()).toEqual([]);
    expect(gate.check()).toEqual([]);
    await gate.run({ name: 'a', arguments: '{}' });
    expect(compiled()).toBe(1);
  });
});
