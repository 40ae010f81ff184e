import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import {
  createToolGate,
  defineTool,
  type JsonSchemaCompiler,
  type ToolDefinition,
  type ToolGateOptions,
} from '../../src/index.ts';
import { readOpenAIChatStream } from '../../src/openai.ts';

interface Bank {
  readonly sent: readonly { readonly version: number; readonly cents: number }[];
}

/** Version `version` of one tool: what it accepts, whether a person approves it, what it runs and commits. */
function transfer(
  version: number,
  options: { readonly max: number; readonly needsApproval: boolean; readonly ran: string[] },
) {
  return defineTool({
    name: 'transfer',
    description: `transfer, version ${version}`,
    inputSchema: {
      type: 'object',
      properties: { cents: { type: 'integer', minimum: 1, maximum: options.max } },
      required: ['cents'],
      additionalProperties: false,
    },
    outputSchema: { type: 'object', properties: { version: { const: version } }, required: ['version'] },
    needsApproval: options.needsApproval,
    execute: (input) => {
      options.ran.push(`v${version}:${input.cents}`);
      return { version, cents: input.cents };
    },
    commit: (state: Bank, output) => ({ sent: [...state.sent, { version, cents: output.cents }] }),
  });
}
const lookup = defineTool({
  name: 'lookup',
  inputSchema: { type: 'object' },
  execute: () => ({ found: true }),
});
const search = defineTool({ name: 'search', inputSchema: { type: 'object' }, execute: () => ({ hits: 3 }) });

function bankGate(tools: ToolGateOptions<Bank>['tools']) {
  const store = createStore<Bank>()(() => ({ sent: [] }));
  return { store, gate: createToolGate<Bank>({ tools, store }) };
}

describe('gate.replaceTools', () => {
  it('a call proposed before keeps its definition through approval, execution, output check and commit', async () => {
    const ran: string[] = [];
    const { gate, store } = bankGate([transfer(1, { max: 1000, needsApproval: true, ran }), lookup]);
    expect(gate.propose({ id: 'old', name: 'transfer', arguments: { cents: 900 } }).status).toBe(
      'awaiting_approval',
    );

    gate.replaceTools([transfer(2, { max: 100, needsApproval: false, ran }), search]);
    expect(gate.tools.map((tool) => tool.description ?? tool.name)).toEqual([
      'transfer, version 2',
      'search',
    ]);

    // 900 cents is over version 2's maximum, and version 2's output check wants version 2: the old call runs as version 1.
    expect(gate.approve('old')).toBe(true);
    expect(await gate.settled('old')).toMatchObject({
      status: 'committed',
      output: { version: 1, cents: 900 },
    });
    expect(store.getState().sent).toEqual([{ version: 1, cents: 900 }]);
    expect(gate.toolResult('old', 'openai-chat').content).toContain('"version":1');

    // Later proposals see the new set.
    expect(await gate.run({ id: 'new', name: 'transfer', arguments: { cents: 50 } })).toMatchObject({
      status: 'committed',
      output: { version: 2 },
    });
    expect(await gate.run({ id: 'big', name: 'transfer', arguments: { cents: 900 } })).toMatchObject({
      status: 'rejected',
      reason: { code: 'invalid_arguments' },
    });
    expect(store.getState().sent).toEqual([
      { version: 1, cents: 900 },
      { version: 2, cents: 50 },
    ]);
    expect(ran).toEqual(['v1:900', 'v2:50']);
  });

  it('rejects a later proposal of a removed tool as unknown_tool, naming the tools there are now', async () => {
    const { gate } = bankGate([lookup]);
    gate.replaceTools([search]);
    const call = await gate.run({ id: 'gone', name: 'lookup', arguments: {} });
    expect(call).toMatchObject({ status: 'rejected', reason: { code: 'unknown_tool' } });
    expect(call.reason?.message).toBe('no tool named "lookup" is registered; the tools are "search"');
    expect(await gate.run({ id: 'added', name: 'search', arguments: {} })).toMatchObject({
      status: 'committed',
      output: { hits: 3 },
    });
  });

  it('a call awaiting approval whose tool was removed can still be approved, and runs the tool it was proposed with', async () => {
    const ran: string[] = [];
    const { gate } = bankGate([transfer(1, { max: 1000, needsApproval: true, ran })]);
    gate.propose({ id: 'old', name: 'transfer', arguments: { cents: 5 } });
    gate.replaceTools([search]);
    expect(gate.approve('old')).toBe(true);
    expect(await gate.settled('old')).toMatchObject({ status: 'committed', output: { version: 1 } });
    expect(ran).toEqual(['v1:5']);
  });

  it('a running call finishes with the definition it started with', async () => {
    let finish: (value: { found: string }) => void = () => {};
    const slow = defineTool({
      name: 'lookup',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', properties: { found: { const: 'old' } } },
      execute: () => new Promise<{ found: string }>((resolve) => (finish = resolve)),
    });
    const { gate } = bankGate([slow]);
    expect(gate.propose({ id: 'running', name: 'lookup', arguments: {} }).status).toBe('executing');
    gate.replaceTools([
      defineTool({
        name: 'lookup',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object', properties: { found: { const: 'new' } } },
        execute: () => ({ found: 'new' }),
      }),
    ]);
    finish({ found: 'old' });
    expect(await gate.settled('running')).toMatchObject({ status: 'committed', output: { found: 'old' } });
  });

  it('a streamed call already opened keeps its definition when the tools change mid-turn; one opened after sees the new set', async () => {
    const ran: string[] = [];
    const { gate } = bankGate([transfer(1, { max: 1000, needsApproval: false, ran })]);
    const reader = readOpenAIChatStream(gate);
    const chunk = (index: number, call: { id?: string; name?: string; args: string }) => ({
      id: 'chatcmpl-1',
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index,
                ...(call.id === undefined ? {} : { id: call.id, type: 'function' }),
                function: { ...(call.name === undefined ? {} : { name: call.name }), arguments: call.args },
              },
            ],
          },
          finish_reason: null,
        },
      ],
    });
    reader.push(chunk(0, { id: 's1', name: 'transfer', args: '{"cents":' }));
    expect(gate.get('s1')?.status).toBe('pending');

    gate.replaceTools([transfer(2, { max: 100, needsApproval: false, ran })]);
    reader.push(chunk(0, { args: '900}' }));
    reader.push(chunk(1, { id: 's2', name: 'transfer', args: '{"cents":900}' }));
    reader.push({ id: 'chatcmpl-1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
    reader.end();
    await reader.settled();
    expect(gate.get('s1')).toMatchObject({ status: 'committed', output: { version: 1, cents: 900 } });
    expect(gate.get('s2')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_arguments' } });
    expect(ran).toEqual(['v1:900']);
  });

  it.each([
    [
      'two tools of one name',
      () => [search, search],
      /gate\.replaceTools: two tools are named "search"; tool names must be unique\./,
    ],
    [
      'a value that is not a tool',
      () => [search, { name: 'broken' }],
      /gate\.replaceTools: tools\[1\] is not a tool .*defineTool/,
    ],
    ['null in the list', () => [null], /gate\.replaceTools: tools\[0\] is not a tool \(got null\)/],
    ['a tool, not a list', () => search, /gate\.replaceTools: pass the tools as an array/],
    [
      'a tool with a commit on a gate without a store',
      () => [
        defineTool({ name: 'c', inputSchema: { type: 'object' }, execute: () => 1, commit: () => ({}) }),
      ],
      /has a commit but the gate has no store/,
    ],
  ])('refuses %s with a clear error and keeps the set it had', async (_, next, message) => {
    const gate = createToolGate({ tools: [lookup] });
    expect(() => gate.replaceTools(next() as never)).toThrow(message);
    expect(gate.tools).toEqual([lookup]);
    expect(await gate.run({ id: 'l1', name: 'lookup', arguments: {} })).toMatchObject({
      status: 'committed',
    });
    expect(await gate.run({ id: 's1', name: 'search', arguments: {} })).toMatchObject({
      status: 'rejected',
      reason: { code: 'unknown_tool' },
    });
  });

  it('createToolGate refuses a value that is not a tool at once', () => {
    expect(() => createToolGate({ tools: [lookup, undefined as never] })).toThrow(
      /createToolGate: tools\[1\] is not a tool \(got undefined\)/,
    );
  });

  it('keeps its own copy: changing the array given later changes nothing', async () => {
    const gate = createToolGate({ tools: [lookup] });
    const next: ToolDefinition[] = [search];
    gate.replaceTools(next);
    next.push(lookup);
    expect(gate.tools.map((tool) => tool.name)).toEqual(['search']);
    expect(await gate.run({ id: 'l1', name: 'lookup', arguments: {} })).toMatchObject({
      status: 'rejected',
      reason: { code: 'unknown_tool' },
    });
  });

  it('compiles a definition kept across a replace only once', () => {
    const compiled: unknown[] = [];
    const jsonSchema: JsonSchemaCompiler = (schema) => {
      compiled.push(schema);
      return (value) => ({ ok: true, value });
    };
    const gate = createToolGate({ tools: [lookup, search], jsonSchema });
    expect(gate.check()).toEqual([]);
    gate.replaceTools([search]);
    gate.replaceTools([search, lookup]);
    expect(gate.check()).toEqual([]);
    expect(compiled).toHaveLength(2);
  });
});
