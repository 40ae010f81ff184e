import {
  DefaultChatTransport,
  jsonSchema,
  simulateReadableStream,
  streamText,
  tool,
  type ModelMessage,
  type ToolSet,
  type UIMessage,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiSdkReply, readAiSdkStream } from '../../src/ai-sdk.ts';
import { createToolGate, type ToolDefinition } from '../../src/index.ts';
import { toolJsonSchema } from '../../src/kit.ts';
import { readByHand } from './support/by-hand.ts';
import { createWorkspace, fragments, getWeather, listTickets, writeFile } from '@toolgate/test-utils';
import { startUiStreamServer, type UiStreamServer } from './support/ui-stream-server.ts';

/** A provider-level stream part, as a model hands it to `streamText`. */
type ModelPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

const usage = {
  inputTokens: { total: 12, noCache: 12, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 30, text: 30, reasoning: 0 },
};
const finish = (unified: 'tool-calls' | 'length' | 'stop', raw: string = unified): ModelPart => ({
  type: 'finish',
  finishReason: { unified, raw },
  usage,
});
const start: ModelPart[] = [
  { type: 'stream-start', warnings: [] },
  { type: 'response-metadata', id: 'resp_1', modelId: 'mock', timestamp: new Date(0) },
];

const text = (id: string, value: string): ModelPart[] => [
  { type: 'text-start', id },
  ...fragments(value, 6).map((delta): ModelPart => ({ type: 'text-delta', id, delta })),
  { type: 'text-end', id },
];

/** One tool call streamed the way providers do: input deltas, then the call with its whole input text. */
const toolCall = (id: string, toolName: string, input: string, { end = true } = {}): ModelPart[] => [
  { type: 'tool-input-start', id, toolName },
  ...fragments(input, 5).map((delta): ModelPart => ({ type: 'tool-input-delta', id, delta })),
  ...(end
    ? ([
        { type: 'tool-input-end', id },
        { type: 'tool-call', toolCallId: id, toolName, input },
      ] satisfies ModelPart[])
    : []),
];

/** A model whose every call streams the next list of parts. */
function mockModel(...turns: ModelPart[][]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: turns.map((chunks) => ({
      stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }),
    })),
  });
}

/** The gate's tools as `streamText` tools without `execute`: the gate runs them, not the SDK. */
function sdkTools(tools: readonly ToolDefinition[]): ToolSet {
  const set: ToolSet = {};
  for (const definition of tools)
    set[definition.name] = tool({ inputSchema: jsonSchema(toolJsonSchema(definition, 'test')) });
  return set;
}

function setup(tools = [getWeather(), writeFile(), listTickets()]) {
  const store = createWorkspace();
  const gate = createToolGate({ tools, store });
  return { store, gate, tools, reader: readAiSdkStream(gate, { previewIntervalMs: 0 }) };
}

describe('streamText fullStream, from the real ai package', () => {
  it('checks each call at tool-input-end from its own deltas, and commits both', async () => {
    const { gate, store, tools, reader } = setup();
    const model = mockModel([
      ...start,
      ...text('t1', 'Checking both.'),
      ...toolCall('call_L', 'get_weather', '{"location":"Lima"}'),
      ...toolCall('call_Q', 'get_weather', '{"location":"Quito"}'),
      finish('tool-calls'),
    ]);
    await reader.read(streamText({ model, tools: sdkTools(tools), prompt: 'Go.' }).fullStream);
    const turn = await reader.settled();
    expect(turn.answers.map((answer) => [answer.id, answer.calls[0]?.status])).toEqual([
      ['call_L', 'committed'],
      ['call_Q', 'committed'],
    ]);
    expect(store.getState().weather).toEqual(['Lima', 'Quito']);
    expect(gate.get('call_L')).toMatchObject({ source: 'ai-sdk', input: { location: 'Lima' } });
    expect(reader.stopReason()).toBe('tool-calls');
  });

  it('rejects a call cut off by finishReason "length" as truncated, while a whole sibling runs', async () => {
    const { gate, store, tools, reader } = setup();
    const model = mockModel([
      ...start,
      ...toolCall('call_W', 'get_weather', '{"location":"Lima"}'),
      ...toolCall('call_F', 'write_file', '{"path":"a.md","content":"half a sen', { end: false }),
      finish('length', 'max_tokens'),
    ]);
    await reader.read(streamText({ model, tools: sdkTools(tools), prompt: 'Go.' }).fullStream);
    expect(gate.get('call_F')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(gate.get('call_F')?.reason?.message).toContain('finishReason "length"');
    expect(gate.get('call_W')?.status).toBe('committed');
    expect(store.getState().files).toEqual({});
  });

  it('takes the input of a call that streamed none from its tool-call part', async () => {
    const { gate, tools, reader } = setup();
    const model = mockModel([
      ...start,
      { type: 'tool-call', toolCallId: 'call_N', toolName: 'list_open_tickets', input: '{}' },
      finish('tool-calls'),
    ]);
    await reader.read(streamText({ model, tools: sdkTools(tools), prompt: 'Go.' }).fullStream);
    expect(gate.get('call_N')).toMatchObject({ status: 'committed', input: {} });
  });

  it('runs nothing of a call the model was still writing when the model reports an error part', async () => {
    const { gate, tools, reader } = setup();
    const model = mockModel([
      ...start,
      ...toolCall('call_W', 'get_weather', '{"location":"Lima"}', { end: false }),
      { type: 'error', error: { type: 'overloaded_error' } },
    ]);
    await reader.read(
      streamText({ model, tools: sdkTools(tools), prompt: 'Go.', onError: () => undefined }).fullStream,
    );
    expect(gate.get('call_W')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(reader.stopReason()).toBe('error');
  });

  it('fails the turn by hand when the model stream breaks, which makes the fullStream throw', async () => {
    const { gate, store, tools, reader } = setup();
    const parts = [...start, ...toolCall('call_W', 'get_weather', '{"location":"Lima"}', { end: false })];
    let next = 0;
    const model = new MockLanguageModelV3({
      doStream: {
        stream: new ReadableStream<ModelPart>({
          pull(controller) {
            const part = parts[next++];
            if (part === undefined) controller.error(new Error('upstream reset'));
            else controller.enqueue(part);
          },
        }),
      },
    });
    const error = await readByHand(
      reader,
      streamText({ model, tools: sdkTools(tools), prompt: 'Go.', onError: () => undefined }).fullStream,
    );
    expect((error as Error).message).toBe('upstream reset');
    expect(gate.get('call_W')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(gate.get('call_W')?.reason?.message).toBe(
      'the stream broke off before this call was complete (upstream reset); nothing was run',
    );
    expect(store.getState().weather).toEqual([]);
  });

  it('cancels a call the model was still writing when the user stops the stream (an abort part)', async () => {
    const { gate, store, tools, reader } = setup();
    const controller = new AbortController();
    const parts = [...start, ...toolCall('call_W', 'get_weather', '{"location":"Lima"}', { end: false })];
    let next = 0;
    // A model still streaming: its stream never closes on its own.
    const model = new MockLanguageModelV3({
      doStream: {
        stream: new ReadableStream<ModelPart>({
          pull(stream) {
            const part = parts[next++];
            if (part !== undefined) stream.enqueue(part);
          },
        }),
      },
    });
    for await (const part of streamText({
      model,
      tools: sdkTools(tools),
      prompt: 'Go.',
      abortSignal: controller.signal,
    }).fullStream) {
      reader.push(part);
      if (part.type === 'tool-input-delta') controller.abort();
    }
    reader.end();
    expect(gate.get('call_W')).toMatchObject({
      status: 'cancelled',
      reason: { code: 'user_cancelled', message: 'the stream was aborted' },
    });
    expect(store.getState().weather).toEqual([]);
  });
});

describe('the UI message stream a useChat client reads, from the real ai package', () => {
  it('reads toolCallId, inputTextDelta and tool-input-available, and previews the input as it streams', async () => {
    const { gate, tools, reader } = setup();
    const model = mockModel([
      ...start,
      ...text('t1', 'Checking Lima.'),
      ...toolCall('call_U', 'get_weather', '{"location":"Lima"}'),
      finish('tool-calls'),
    ]);
    const previews: unknown[] = [];
    gate.calls.subscribe((state) => {
      const call = state.records.get('call_U');
      if (call?.status === 'pending' && call.preview !== undefined) previews.push(call.preview);
    });
    await reader.read(streamText({ model, tools: sdkTools(tools), prompt: 'Go.' }).toUIMessageStream());
    expect(gate.get('call_U')).toMatchObject({ status: 'committed', input: { location: 'Lima' } });
    expect(previews).toContainEqual({ location: 'Li' });
    expect(reader.stopReason()).toBe('tool-calls');
    expect(reader.assistantMessage()).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking Lima.' },
        { type: 'tool-call', toolCallId: 'call_U', toolName: 'get_weather', input: { location: 'Lima' } },
      ],
    });
  });

  it('rejects a call cut off by "length" as truncated, though the UI finish-step carries no reason', async () => {
    const { gate, tools, reader } = setup();
    const model = mockModel([
      ...start,
      ...toolCall('call_F', 'write_file', '{"path":"a.md","content":"half a sen', { end: false }),
      finish('length'),
    ]);
    await reader.read(streamText({ model, tools: sdkTools(tools), prompt: 'Go.' }).toUIMessageStream());
    expect(gate.get('call_F')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(reader.stopReason()).toBe('length');
  });

  describe('over HTTP, through the DefaultChatTransport that useChat uses', () => {
    let server: UiStreamServer;
    beforeAll(async () => {
      server = await startUiStreamServer();
    });
    afterAll(() => server.close());

    const messages: UIMessage[] = [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Go.' }] }];
    const send = () =>
      new DefaultChatTransport({ api: `${server.url}/api/chat` }).sendMessages({
        trigger: 'submit-message',
        chatId: 'c1',
        messageId: undefined,
        messages,
        abortSignal: undefined,
      });

    it('commits the calls the model finished', async () => {
      const { store, tools, reader } = setup();
      const model = mockModel([
        ...start,
        ...toolCall('call_W', 'get_weather', '{"location":"Lima"}'),
        finish('tool-calls'),
      ]);
      server.enqueue(() =>
        streamText({ model, tools: sdkTools(tools), prompt: 'Go.' }).toUIMessageStreamResponse(),
      );
      await reader.read(await send());
      expect(store.getState().weather).toEqual(['Lima']);
    });

    it('fails the turn by hand when the connection drops: a call whose input looks whole does not run', async () => {
      const { gate, store, tools, reader } = setup();
      const model = mockModel([
        ...start,
        ...toolCall('call_A', 'get_weather', '{"location":"Lima"}'),
        ...toolCall('call_B', 'get_weather', '{"location":"Cusco"}'),
        finish('tool-calls'),
      ]);
      // start, start-step, call_A (start, 4 deltas, available), call_B (start, 4 deltas): the rest never arrives.
      server.enqueue(
        () => streamText({ model, tools: sdkTools(tools), prompt: 'Go.' }).toUIMessageStreamResponse(),
        { cutAfter: 2 + 6 + 5 },
      );
      const error = await readByHand(reader, await send());

      expect(error).toBeInstanceOf(Error);
      const turn = await reader.settled();
      expect(
        turn.answers.map((answer) => [answer.id, answer.calls[0]?.status, answer.calls[0]?.reason?.code]),
      ).toEqual([
        ['call_A', 'committed', undefined],
        ['call_B', 'rejected', 'truncated'],
      ]);
      expect(gate.get('call_B')?.reason?.message).toContain(
        'the stream broke off before this call was complete',
      );
      expect(store.getState().weather).toEqual(['Lima']);
    });
  });
});

describe('the assistant message and the reply, sent back through streamText', () => {
  it('gives the model its reasoning, text and tool calls as read, then one tool-result per call', async () => {
    const { tools, reader } = setup();
    const signature = { anthropic: { signature: 'EqQBCgIYAhIM' } };
    const first = mockModel([
      ...start,
      { type: 'reasoning-start', id: 'r1' },
      { type: 'reasoning-delta', id: 'r1', delta: 'Lima first.' },
      { type: 'reasoning-end', id: 'r1', providerMetadata: signature },
      ...text('t1', 'On it.'),
      ...toolCall('call_L', 'get_weather', '{"location":"Lima"}'),
      ...toolCall('call_X', 'get_weather', '{"location":42}'),
      finish('tool-calls'),
    ]);
    await reader.read(streamText({ model: first, tools: sdkTools(tools), prompt: 'Weather?' }).fullStream);
    const reply = aiSdkReply(await reader.settled());

    const second = mockModel([...start, ...text('t2', 'Lima is 18°C.'), finish('stop')]);
    const messages: ModelMessage[] = [
      { role: 'user', content: 'Weather?' },
      reader.assistantMessage(),
      ...reply,
    ];
    const result = streamText({ model: second, tools: sdkTools(tools), messages });
    await result.consumeStream();

    const prompt = second.doStreamCalls[0]?.prompt;
    expect(prompt?.[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Lima first.', providerOptions: signature },
        { type: 'text', text: 'On it.' },
        { type: 'tool-call', toolCallId: 'call_L', toolName: 'get_weather', input: { location: 'Lima' } },
        { type: 'tool-call', toolCallId: 'call_X', toolName: 'get_weather', input: { location: 42 } },
      ],
    });
    expect(prompt?.[2]).toMatchObject({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_L',
          toolName: 'get_weather',
          output: { type: 'json', value: { location: 'Lima', temperature: 18 } },
        },
        {
          type: 'tool-result',
          toolCallId: 'call_X',
          toolName: 'get_weather',
          output: {
            type: 'error-text',
            value: expect.stringMatching(/rejected \(invalid_arguments\)/) as string,
          },
        },
      ],
    });
    expect(await result.text).toBe('Lima is 18°C.');
  });
});

describe('provider-level (LanguageModelV3) parts read directly', () => {
  it('keeps the streamed text the source of truth over a tool-call part that says otherwise', () => {
    const { gate, reader } = setup();
    const parts: ModelPart[] = [
      ...toolCall('call_L', 'get_weather', '{"location":"Lima"}').slice(0, -1),
      { type: 'tool-call', toolCallId: 'call_L', toolName: 'get_weather', input: '{"location":"Quito"}' },
    ];
    for (const part of parts) reader.push(part);
    expect(gate.get('call_L')).toMatchObject({ status: 'committed', input: { location: 'Lima' } });
  });

  it('reads a { unified, raw } finish reason', () => {
    const { gate, reader } = setup();
    for (const part of [
      ...toolCall('call_F', 'write_file', '{"path":"a.md","content":"half', { end: false }),
      finish('length', 'max_tokens'),
    ])
      reader.push(part);
    expect(gate.get('call_F')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(reader.stopReason()).toBe('length');
  });
});
