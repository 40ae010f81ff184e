import { describe, expect, it } from 'vitest';
import { createToolGate, defineTool, isCallOf, type ProposalSource } from '../src/index.ts';

const echo = defineTool({
  name: 'get_weather',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  execute: (input) => ({ forecast: `sunny in ${input.city}` }),
});
const gateWith = () => createToolGate({ tools: [echo] });
const city = { city: 'Bogotá' };

describe('every input shape', () => {
  const shapes: [string, unknown, string | undefined, ProposalSource][] = [
    [
      'the seed JSON string wrapper',
      JSON.stringify({ name: 'get_weather', arguments: JSON.stringify(city) }),
      undefined,
      'json',
    ],
    [
      'a JSON string of an OpenAI tool call',
      JSON.stringify({
        id: 'call_9',
        type: 'function',
        function: { name: 'get_weather', arguments: JSON.stringify(city) },
      }),
      'call_9',
      'json',
    ],
    [
      'an OpenAI Chat tool_calls[] entry',
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(city) } },
      'call_1',
      'openai-chat',
    ],
    [
      'an OpenAI Responses function_call item (id = call_id)',
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_2',
        name: 'get_weather',
        arguments: JSON.stringify(city),
        status: 'completed',
      },
      'call_2',
      'openai-responses',
    ],
    [
      'an Anthropic tool_use block',
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: city },
      'toolu_1',
      'anthropic',
    ],
    [
      'a Gemini functionCall part with an id',
      { functionCall: { id: 'g_1', name: 'get_weather', args: city }, thoughtSignature: 'sig' },
      'g_1',
      'gemini',
    ],
    ['MCP tools/call params', { name: 'get_weather', arguments: city }, undefined, 'normalised'],
    [
      'an MCP JSON-RPC tools/call request',
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_weather', arguments: city } },
      undefined,
      'mcp',
    ],
    [
      'an AI SDK tool-call part',
      { type: 'tool-call', toolCallId: 'ai_1', toolName: 'get_weather', input: city },
      'ai_1',
      'ai-sdk',
    ],
    [
      'an AI SDK provider-layer tool-call (input as a string)',
      { type: 'tool-call', toolCallId: 'ai_2', toolName: 'get_weather', input: JSON.stringify(city) },
      'ai_2',
      'ai-sdk',
    ],
    [
      'an AI SDK v4 tool-call (args)',
      { type: 'tool-call', toolCallId: 'ai_3', toolName: 'get_weather', args: city },
      'ai_3',
      'ai-sdk',
    ],
    [
      'a normalised call with string arguments',
      { id: 'n_1', name: 'get_weather', arguments: JSON.stringify(city) },
      'n_1',
      'normalised',
    ],
    [
      'a normalised call with object arguments',
      { id: 'n_2', name: 'get_weather', arguments: city },
      'n_2',
      'normalised',
    ],
  ];

  it.each(shapes)('runs %s', async (_what, input, id, source) => {
    const gate = gateWith();
    const call = await gate.run(input);
    expect(call).toMatchObject({
      status: 'committed',
      name: 'get_weather',
      input: city,
      output: { forecast: 'sunny in Bogotá' },
      source,
    });
    if (id !== undefined) expect(call.id).toBe(id);
    expect(call.generatedId).toBe(id === undefined);
  });

  it('does not take a JSON-RPC request id for a call id: two connections both send request 1', () => {
    const gate = gateWith();
    const request = (who: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_weather', arguments: { city: who } },
    });
    const alice = gate.propose(request('Alice'));
    const bob = gate.propose(request('Bob'));
    expect(alice.id).not.toBe(bob.id);
    expect(bob).toMatchObject({ status: 'committed', output: { forecast: 'sunny in Bob' } });
  });

  it('makes an id for a Gemini call that has none, distinct per call', () => {
    const gate = gateWith();
    const a = gate.propose({ functionCall: { name: 'get_weather', args: city } });
    const b = gate.propose({ functionCall: { name: 'get_weather', args: city } });
    expect(a.id).not.toBe(b.id);
    expect(a.generatedId).toBe(true);
    expect(a.status).toBe('committed');
  });

  it('uses the id given in options over the one in the proposal', () => {
    const gate = gateWith();
    const call = gate.propose(
      { functionCall: { name: 'get_weather', args: city } },
      { id: 'msg_1:0', turn: 'msg_1' },
    );
    expect(call).toMatchObject({ id: 'msg_1:0', turn: 'msg_1', generatedId: false });
  });

  it('reads a Responses call marked incomplete as truncated', () => {
    const gate = gateWith();
    const call = gate.propose({
      type: 'function_call',
      call_id: 'c',
      name: 'get_weather',
      arguments: '{"city":"Bo',
      status: 'incomplete',
    });
    expect(call.reason?.code).toBe('truncated');
  });

  it('treats missing arguments as {} (MCP and Gemini make them optional)', async () => {
    const none = defineTool({
      name: 'ping',
      inputSchema: { type: 'object', additionalProperties: false },
      execute: () => 'pong',
    });
    const gate = createToolGate({ tools: [none] });
    expect((await gate.run({ name: 'ping' })).status).toBe('committed');
    expect((await gate.run({ functionCall: { name: 'ping' } })).status).toBe('committed');
  });

  it.each([
    ['an empty object', {}],
    ['a name that is a number', { name: 42, arguments: '{}' }],
    ['an empty name', { name: '', arguments: '{}' }],
    [
      'an OpenAI entry without a function name',
      { id: 'call_x', type: 'function', function: { arguments: '{}' } },
    ],
    ['an id that is an object', { id: { a: 1 }, name: 'get_weather', arguments: '{}' }],
    [
      'a custom (free-text) tool call',
      { id: 'c', type: 'custom', custom: { name: 'get_weather', input: 'Bogotá' } },
    ],
    ['a JSON string that is an array', '[1,2]'],
    ['a JSON string that is not JSON', 'call get_weather(Bogotá)'],
  ])('rejects %s with a reason', (_what, input) => {
    const call = gateWith().propose(input);
    expect(call.status).toBe('rejected');
    expect(['invalid_shape', 'invalid_json']).toContain(call.reason?.code);
    expect(call.reason?.message.length).toBeGreaterThan(10);
  });

  it('keeps the id of a call it cannot read, so the model can be answered', () => {
    const gate = gateWith();
    const call = gate.propose({ id: 'call_keep', type: 'function', function: { arguments: '{}' } });
    expect(call).toMatchObject({ id: 'call_keep', status: 'rejected' });
    expect(gate.toolResult('call_keep', 'openai-chat')).toMatchObject({ tool_call_id: 'call_keep' });
  });

  it('turns a proposal whose getter throws into a rejection', () => {
    const hostile = {
      get name(): string {
        throw new Error('gotcha');
      },
      arguments: '{}',
    };
    const call = gateWith().propose(hostile);
    expect(call.reason).toMatchObject({ code: 'invalid_shape' });
    expect(call.reason?.message).toMatch(/gotcha/);
  });

  it('turns arguments whose getter throws into a rejection', () => {
    const args = {
      get city(): string {
        throw new Error('boom');
      },
    };
    const call = gateWith().propose({ name: 'get_weather', arguments: args });
    expect(call.status).toBe('rejected');
  });

  it('rejects a wrapper string over the size limit before parsing it', () => {
    const gate = createToolGate({ tools: [echo], limits: { maxArgumentChars: 100 } });
    const call = gate.propose(
      JSON.stringify({ name: 'get_weather', arguments: JSON.stringify({ city: 'x'.repeat(1000) }) }),
    );
    expect(call.reason?.code).toBe('too_large');
  });

  it('rejects a wrapper string nested too deep before parsing it', () => {
    const call = gateWith().propose(
      '{"name":"get_weather","arguments":' + '['.repeat(500) + ']'.repeat(500) + '}',
    );
    expect(call.reason?.code).toBe('too_deep');
  });
});

describe('isCallOf', () => {
  it('tells a call of a tool from a call of another', () => {
    const gate = gateWith();
    const call = gate.propose({ name: 'get_weather', arguments: city });
    const other = gate.propose({ name: 'nope', arguments: {} });
    expect(isCallOf(echo, call)).toBe(true);
    expect(isCallOf(echo, other)).toBe(false);
    expect(isCallOf(echo, undefined)).toBe(false);
  });
});
