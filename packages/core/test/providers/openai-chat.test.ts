import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createToolGate, type ToolCallRecord, type ToolDefinition } from '../../src/index.ts';
import { openaiChatReply, readOpenAIChatStream } from '../../src/openai.ts';
import { readByHand } from './support/by-hand.ts';
import {
  chatStream,
  createWorkspace,
  DEFECTS,
  getTime,
  getWeather,
  interleave,
  type ReplayServer,
  startReplayServer,
  streamedCall,
  WRAPPER as wrapper,
  writeFile,
} from '@toolgate/test-utils';

let server: ReplayServer;
let client: OpenAI;

beforeAll(async () => {
  server = await startReplayServer();
  client = new OpenAI({ apiKey: 'test-key', baseURL: `${server.url}/v1`, maxRetries: 0 });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const request = {
  model: 'gpt-4.1',
  messages: [{ role: 'user' as const, content: 'Go.' }],
  stream: true as const,
};

/** Streams one scripted turn through the official client into a fresh gate. */
async function turn(
  parts: Parameters<typeof chatStream>[0],
  tools: ToolDefinition[],
  finish: string | null = 'tool_calls',
) {
  const store = createWorkspace();
  const gate = createToolGate({ tools, store });
  server.enqueue(chatStream(parts, finish));
  const reader = readOpenAIChatStream(gate, { previewIntervalMs: 0 });
  await reader.read(await client.chat.completions.create(request));
  const settled = await reader.settled();
  return { gate, store, reader, settled };
}

describe('OpenAI Chat Completions stream, through the openai SDK', () => {
  it('assembles interleaved parallel calls numbered from 1, not contiguously, and commits both', async () => {
    const weather = streamedCall(1, 'call_W', 'get_weather', '{"location":"Oslo","unit":"celsius"}', 5);
    const time = streamedCall(3, 'call_T', 'get_time', '{"timezone":"Europe/Oslo"}', 4);
    const { gate, store, settled, reader } = await turn(interleave(weather, time), [getWeather(), getTime()]);

    expect(settled.answers.map((a) => [a.id, a.calls[0]?.status])).toEqual([
      ['call_W', 'committed'],
      ['call_T', 'committed'],
    ]);
    expect(gate.get('call_W')).toMatchObject({
      input: { location: 'Oslo', unit: 'celsius' },
      turn: 'chatcmpl-T1',
    });
    expect(store.getState().weather).toEqual(['Oslo']);
    expect(reader.stopReason()).toBe('tool_calls');
    expect(reader.assistantMessage().tool_calls?.map((c) => [c.id, c.function.arguments])).toEqual([
      ['call_W', '{"location":"Oslo","unit":"celsius"}'],
      ['call_T', '{"timezone":"Europe/Oslo"}'],
    ]);
  });

  it("reads the stream the SDK's own finalChatCompletion() cannot assemble", async () => {
    const parts = interleave(
      streamedCall(1, 'call_W', 'get_weather', '{"location":"Oslo"}'),
      streamedCall(2, 'call_T', 'get_time', '{"timezone":"UTC"}'),
    );
    server.enqueue(chatStream(parts));
    const sdkStream = client.chat.completions.stream({ model: 'gpt-4.1', messages: request.messages });
    // The SDK keeps tool calls in an array indexed by `index`, so a gateway that starts at 1 leaves a hole.
    await expect(sdkStream.finalChatCompletion()).rejects.toThrow(/Cannot read properties of undefined/);

    const { settled } = await turn(parts, [getWeather(), getTime()]);
    expect(settled.answers.map((a) => a.calls[0]?.status)).toEqual(['committed', 'committed']);
  });

  it('shows each call as pending with a growing preview before it is checked', async () => {
    const store = createWorkspace();
    const gate = createToolGate({ tools: [writeFile()], store });
    const seen: ToolCallRecord[] = [];
    gate.calls.subscribe((state) => {
      const call = state.records.get('call_F');
      if (call !== undefined) seen.push(call);
    });
    const content = 'line one\nline "two"\n'.repeat(20);
    server.enqueue(
      chatStream(streamedCall(0, 'call_F', 'write_file', JSON.stringify({ path: 'a.md', content }), 9)),
    );
    const reader = readOpenAIChatStream(gate, { previewIntervalMs: 0 });
    await reader.read(await client.chat.completions.create(request));
    await reader.settled();

    const pending = seen.filter((call) => call.status === 'pending');
    expect(pending[0]).toMatchObject({ status: 'pending', name: 'write_file' });
    const previews = pending
      .map((call) => call.preview as { content?: string } | undefined)
      .filter((p) => p?.content !== undefined);
    expect(previews.length).toBeGreaterThan(10);
    for (const [i, preview] of previews.entries()) {
      expect(content.startsWith(preview?.content ?? '')).toBe(true);
      if (i > 0)
        expect((preview?.content ?? '').length).toBeGreaterThanOrEqual(
          (previews[i - 1]?.content ?? '').length,
        );
    }
    expect(gate.get('call_F')?.status).toBe('committed');
    expect(store.getState().files['a.md']).toBe(content);
  });

  it('rejects a call cut off by finish_reason "length" as truncated and commits nothing, while a whole sibling still runs', async () => {
    const cut = '{"path":"notes/summary.md","content":"# Quarterly summary\\n\\nRevenue grew 12% while op';
    const parts = [
      ...streamedCall(0, 'call_W', 'get_weather', '{"location":"Rome"}'),
      ...streamedCall(1, 'call_F', 'write_file', cut),
    ];
    const { gate, store, reader } = await turn(
      parts,
      [getWeather(), writeFile(['trailing_text', 'string_scalars'])],
      'length',
    );

    expect(gate.get('call_F')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(gate.get('call_F')?.reason?.message).toContain('finish_reason "length"');
    expect(gate.get('call_W')?.status).toBe('committed');
    expect(store.getState().files).toEqual({});
    expect(reader.stopReason()).toBe('length');
  });

  it('checks every call when the stream ends without a finish_reason', async () => {
    const { gate } = await turn(
      streamedCall(0, 'call_T', 'get_time', '{"timezone":"UTC"}'),
      [getTime()],
      null,
    );
    expect(gate.get('call_T')?.status).toBe('committed');
  });

  it('treats a new id at an index already in use as a new call', async () => {
    const parts = [
      ...streamedCall(0, 'call_A', 'get_time', '{"timezone":"UTC"}'),
      ...streamedCall(0, 'call_B', 'get_time', '{"timezone":"CET"}'),
    ];
    const { settled } = await turn(parts, [getTime()]);
    expect(settled.answers.map((a) => [a.id, a.calls[0]?.status])).toEqual([
      ['call_A', 'committed'],
      ['call_B', 'committed'],
    ]);
  });
});

describe('OpenAI Chat known defects, streamed through the openai SDK', () => {
  for (const defect of DEFECTS) {
    it(`rejects ${defect.defect} by default, saying exactly what was wrong`, async () => {
      const { gate, settled } = await turn(streamedCall(0, 'call_D', defect.name, defect.args, 6), [
        defect.tool(),
      ]);
      const call = gate.get('call_D');
      expect(call).toMatchObject({ status: 'rejected', reason: { code: defect.reason.code } });
      expect(call?.reason?.message).toMatch(defect.reason.message);
      expect(openaiChatReply(settled)[0]?.content).toMatch(/rejected/);
    });

    if (defect.repaired !== undefined) {
      it(`repairs ${defect.defect} only for a tool that opted in to ${defect.repair}, recording the repair`, async () => {
        const { gate } = await turn(streamedCall(0, 'call_D', defect.name, defect.args, 6), [
          defect.tool([defect.repair]),
        ]);
        const call = gate.get('call_D');
        expect(call).toMatchObject({ status: 'committed', input: defect.repaired });
        expect(call?.repairs?.map((r) => r.kind)).toContain(defect.repair);
        const validated = gate.audit
          .export()
          .find((event) => event.callId === 'call_D' && event.to === 'validated');
        expect(validated?.repairs?.map((r) => r.kind)).toContain(defect.repair);
      });
    }
  }

  it('never repairs two concatenated objects, even for a tool that allows every repair', async () => {
    const { gate } = await turn(
      streamedCall(0, 'call_D', 'get_weather', '{"location":"Tokyo"}{"location":"Osaka"}'),
      [
        getWeather([
          'trailing_text',
          'double_encoded',
          'string_scalars',
          'stringified_json',
          'empty_arguments',
        ]),
      ],
    );
    expect(gate.get('call_D')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_json' } });
  });

  it('rejects a multi_tool_use.parallel wrapper with a reason naming the wrapped calls', async () => {
    const { gate, store, settled } = await turn(
      streamedCall(0, 'call_M', 'multi_tool_use.parallel', wrapper),
      [getWeather(), getTime()],
    );
    expect(gate.get('call_M')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });
    expect(gate.get('call_M')?.reason?.message).toBe(
      '"multi_tool_use.parallel" is not a tool: the model wrapped 2 calls (get_weather, get_time) in it; send each as its own tool call',
    );
    expect(store.getState().weather).toEqual([]);
    expect(openaiChatReply(settled).map((m) => m.role === 'tool' && m.tool_call_id)).toEqual(['call_M']);
  });

  it('unwraps the wrapper when every wrapped tool opted in, and answers the wrapper id once', async () => {
    const { gate, store, settled, reader } = await turn(
      streamedCall(0, 'call_M', 'multi_tool_use.parallel', wrapper),
      [getWeather(['parallel_wrapper']), getTime(['parallel_wrapper'])],
    );
    expect(gate.get('call_M#1')).toMatchObject({
      status: 'committed',
      name: 'get_weather',
      repairs: [{ kind: 'parallel_wrapper' }],
    });
    expect(gate.get('call_M#2')).toMatchObject({ status: 'committed', name: 'get_time' });
    expect(store.getState().weather).toEqual(['Rome']);
    const reply = openaiChatReply(settled);
    expect(reply).toEqual([
      {
        role: 'tool',
        tool_call_id: 'call_M',
        content: expect.stringMatching(/get_weather.*\n.*get_time: 12:00 in Europe\/Rome/s),
      },
    ]);
    expect(reader.assistantMessage().tool_calls?.map((c) => c.id)).toEqual(['call_M']);
  });

  it('does not unwrap when one wrapped tool did not opt in', async () => {
    const { gate } = await turn(streamedCall(0, 'call_M', 'multi_tool_use.parallel', wrapper), [
      getWeather(['parallel_wrapper']),
      getTime(),
    ]);
    expect(gate.get('call_M')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });
    expect(gate.get('call_M#1')).toBeUndefined();
  });
});

describe('OpenAI Chat reply, sent back through the openai SDK', () => {
  it('answers a mixed turn (committed, rejected, cancelled) with one tool message per call id', async () => {
    const store = createWorkspace();
    const slow = { ...getTime(), execute: () => new Promise<string>(() => undefined) };
    const gate = createToolGate({ tools: [getWeather(), slow], store });
    server.enqueue(
      chatStream([
        ...streamedCall(0, 'call_OK', 'get_weather', '{"location":"Oslo"}'),
        ...streamedCall(1, 'call_BAD', 'get_weather', '{"location":42}'),
        ...streamedCall(2, 'call_STOP', 'get_time', '{"timezone":"UTC"}'),
      ]),
    );
    const reader = readOpenAIChatStream(gate);
    await reader.read(await client.chat.completions.create(request));
    expect(gate.get('call_STOP')?.status).toBe('executing');
    gate.cancel('call_STOP', 'the user stopped it');
    const reply = openaiChatReply(await reader.settled());

    const messages: ChatCompletionMessageParam[] = [...request.messages, reader.assistantMessage(), ...reply];
    server.enqueueJson({
      id: 'chatcmpl-2',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4.1',
      choices: [],
    });
    await client.chat.completions.create({ model: 'gpt-4.1', messages });

    const sent = server.requests.at(-1)?.body.messages as {
      role: string;
      tool_call_id?: string;
      content: string;
    }[];
    const answered = sent.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
    const asked = (
      sent.find((m) => m.role === 'assistant') as unknown as { tool_calls: { id: string }[] }
    ).tool_calls.map((c) => c.id);
    expect(answered).toEqual(asked);
    expect(answered).toEqual(['call_OK', 'call_BAD', 'call_STOP']);
    expect(sent.find((m) => m.tool_call_id === 'call_BAD')?.content).toMatch(
      /rejected \(invalid_arguments\)[\s\S]*\/location: must be string/,
    );
    expect(sent.find((m) => m.tool_call_id === 'call_STOP')?.content).toMatch(
      /cancelled \(user_cancelled\): the user stopped it/,
    );
  });
});

describe('an OpenAI Chat stream read by hand, when the connection drops', () => {
  it('fails the turn: no call runs, not even one whose JSON happened to be whole, and every call is answered', async () => {
    const store = createWorkspace();
    const gate = createToolGate({ tools: [getWeather(), getTime()], store });
    const events = chatStream(
      interleave(
        streamedCall(0, 'call_W', 'get_weather', '{"location":"Oslo"}'),
        streamedCall(1, 'call_T', 'get_time', '{"timezone":"U'),
      ),
    );
    // Every argument fragment arrives; the finish chunk and [DONE] never do.
    server.enqueue(events, { cutAfter: events.length - 2 });
    const reader = readOpenAIChatStream(gate);
    const error = await readByHand(reader, await client.chat.completions.create(request));

    expect(error).toBeInstanceOf(Error);
    const turn = await reader.settled();
    expect(turn.answers.map((a) => [a.id, a.calls[0]?.status, a.calls[0]?.reason?.code])).toEqual([
      ['call_W', 'rejected', 'truncated'],
      ['call_T', 'rejected', 'truncated'],
    ]);
    expect(gate.get('call_W')?.reason?.message).toBe(
      `the stream broke off before this call was complete (${(error as Error).message}); nothing was run`,
    );
    expect(store.getState().weather).toEqual([]);
    expect(openaiChatReply(turn).map((m) => m.role === 'tool' && m.tool_call_id)).toEqual([
      'call_W',
      'call_T',
    ]);
  });

  it('leaves a turn the provider finished alone when fail() comes after end()', async () => {
    const { gate, reader } = await turn(streamedCall(0, 'call_T', 'get_time', '{"timezone":"UTC"}'), [
      getTime(),
    ]);
    reader.fail(new Error('late'));
    expect(gate.get('call_T')?.status).toBe('committed');
  });
});
