import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicReply, readAnthropicStream } from '../../src/anthropic.ts';
import { createToolGate, type ToolDefinition } from '../../src/index.ts';
import { readByHand } from './support/by-hand.ts';
import {
  createWorkspace,
  DEFECTS,
  fragments,
  getTime,
  getWeather,
  listTickets,
  type ReplayServer,
  type SseEvent,
  startReplayServer,
  writeFile,
} from '@toolgate/test-utils';

let server: ReplayServer;
let client: Anthropic;

beforeAll(async () => {
  server = await startReplayServer();
  client = new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 });
});
afterAll(() => server.close());

type Event = { type: string } & Record<string, unknown>;

const sse = (events: readonly Event[]): SseEvent[] =>
  events.map((event) => ({ event: event.type, data: event }));

const messageStart: Event = {
  type: 'message_start',
  message: {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 530, output_tokens: 3 },
  },
};

function toolUse(
  index: number,
  id: string,
  name: string,
  input: string,
  size = 8,
): { start: Event; deltas: Event[]; stop: Event } {
  return {
    start: { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } },
    deltas: ['', ...fragments(input, size)].map((partial_json) => ({
      type: 'content_block_delta',
      index,
      delta: { type: 'input_json_delta', partial_json },
    })),
    stop: { type: 'content_block_stop', index },
  };
}

const text = (index: number, value: string): Event[] => [
  { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index, delta: { type: 'text_delta', text: value } },
  { type: 'content_block_stop', index },
];

const end = (stop_reason: string): Event[] => [
  { type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 96 } },
  { type: 'message_stop' },
];

const params = {
  model: 'claude-sonnet-5-5',
  max_tokens: 1024,
  messages: [{ role: 'user' as const, content: 'Go.' }],
};

async function turn(events: readonly Event[], tools: ToolDefinition[]) {
  const store = createWorkspace();
  const gate = createToolGate({ tools, store });
  server.enqueue(sse(events));
  const reader = readAnthropicStream(gate, { previewIntervalMs: 0 });
  await reader.read(await client.messages.create({ ...params, stream: true }));
  return { gate, store, reader, settled: await reader.settled() };
}

describe('Anthropic Messages stream, through @anthropic-ai/sdk', () => {
  it('reads parallel tool_use blocks after a text block, with interleaved input_json_delta fragments, keyed by block index', async () => {
    const a = toolUse(1, 'toolu_A', 'get_weather', '{"location": "Vienna, Austria"}');
    const b = toolUse(2, 'toolu_B', 'get_weather', '{"location": "Prague, Czechia", "unit": "celsius"}');
    const deltas = b.deltas.flatMap((delta, i) => [
      ...(a.deltas[i] === undefined ? [] : [a.deltas[i]]),
      delta,
    ]);
    const { gate, store, settled, reader } = await turn(
      [
        messageStart,
        ...text(0, 'Checking both cities.'),
        a.start,
        b.start,
        { type: 'ping' },
        ...deltas,
        a.stop,
        b.stop,
        ...end('tool_use'),
      ],
      [getWeather()],
    );
    expect(settled.turn).toBe('msg_01');
    expect(settled.answers.map((answer) => [answer.id, answer.calls[0]?.status])).toEqual([
      ['toolu_A', 'committed'],
      ['toolu_B', 'committed'],
    ]);
    expect(gate.get('toolu_B')?.input).toEqual({ location: 'Prague, Czechia', unit: 'celsius' });
    expect(store.getState().weather).toEqual(['Vienna, Austria', 'Prague, Czechia']);
    expect(reader.stopReason()).toBe('tool_use');
  });

  it('checks a block at its content_block_stop when its input is whole JSON, before the message ends', async () => {
    const store = createWorkspace();
    const gate = createToolGate({ tools: [getTime()], store });
    const reader = readAnthropicStream(gate);
    const block = toolUse(0, 'toolu_T', 'get_time', '{"timezone":"UTC"}');
    for (const event of [messageStart, block.start, ...block.deltas]) reader.push(event);
    expect(gate.get('toolu_T')?.status).toBe('pending');
    reader.push(block.stop);
    expect(gate.get('toolu_T')?.status).toBe('committed');
  });

  it('reads a tool without arguments (an empty input buffer) as its start input {}', async () => {
    const block = toolUse(0, 'toolu_N', 'list_open_tickets', '');
    const { gate } = await turn(
      [messageStart, block.start, ...block.deltas, block.stop, ...end('tool_use')],
      [listTickets()],
    );
    expect(gate.get('toolu_N')).toMatchObject({ status: 'committed', input: {} });
  });

  it("rejects a write cut by max_tokens as truncated, where the SDK's finalMessage() silently drops the cut key", async () => {
    const cut = '{"path": "src/app.ts", "content": "import express from \'express\';\\nconst app = exp';
    const block = toolUse(1, 'toolu_W', 'write_file', cut);
    const events = [
      messageStart,
      ...text(0, 'Writing it.'),
      block.start,
      ...block.deltas,
      block.stop,
      ...end('max_tokens'),
    ];

    server.enqueue(sse(events));
    const store = createWorkspace();
    const gate = createToolGate({ tools: [writeFile(['trailing_text', 'string_scalars'])], store });
    const reader = readAnthropicStream(gate);
    const sdkStream = client.messages.stream(params);
    await reader.read(sdkStream);
    const final = await sdkStream.finalMessage();

    const sdkInput = final.content.find((block) => block.type === 'tool_use')?.input;
    expect(sdkInput).toEqual({ path: 'src/app.ts' });
    expect(final.stop_reason).toBe('max_tokens');
    expect(gate.get('toolu_W')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(gate.get('toolu_W')?.reason?.message).toContain('stop_reason "max_tokens"');
    expect(store.getState().files).toEqual({});
  });

  it('truncates a block still open when the stream ends without a stop_reason', async () => {
    const block = toolUse(0, 'toolu_T', 'get_time', '{"timezone":"U');
    const { gate } = await turn([messageStart, block.start, ...block.deltas], [getTime()]);
    expect(gate.get('toolu_T')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
  });

  for (const defect of DEFECTS.filter((d) => d.args !== '')) {
    it(`rejects ${defect.defect} in streamed input by default and repairs it only on opt-in`, async () => {
      const block = toolUse(0, 'toolu_D', defect.name, defect.args);
      const events = [messageStart, block.start, ...block.deltas, block.stop, ...end('tool_use')];
      const plain = await turn(events, [defect.tool()]);
      expect(plain.gate.get('toolu_D')).toMatchObject({
        status: 'rejected',
        reason: { code: defect.reason.code },
      });
      expect(plain.gate.get('toolu_D')?.reason?.message).toMatch(defect.reason.message);
      if (defect.repaired !== undefined) {
        const repaired = await turn(events, [defect.tool([defect.repair])]);
        expect(repaired.gate.get('toolu_D')).toMatchObject({ status: 'committed', input: defect.repaired });
        expect(repaired.gate.get('toolu_D')?.repairs?.map((r) => r.kind)).toContain(defect.repair);
      }
    });
  }

  it('answers a mixed turn in one user message, tool_result blocks first, accepted by the SDK', async () => {
    const slow = { ...getTime(), execute: () => new Promise<string>(() => undefined) };
    const ok = toolUse(0, 'toolu_OK', 'get_weather', '{"location":"Vienna"}');
    const bad = toolUse(1, 'toolu_BAD', 'get_weather', '{"location":["Vienna"]}');
    const stop = toolUse(2, 'toolu_STOP', 'get_time', '{"timezone":"UTC"}');
    const store = createWorkspace();
    const gate = createToolGate({ tools: [getWeather(), slow], store });
    server.enqueue(
      sse([
        messageStart,
        ...[ok, bad, stop].flatMap((b) => [b.start, ...b.deltas, b.stop]),
        ...end('tool_use'),
      ]),
    );
    const reader = readAnthropicStream(gate);
    const sdkStream = client.messages.stream(params);
    await reader.read(sdkStream);
    gate.cancel('toolu_STOP', 'the user stopped it');
    const reply = anthropicReply(await reader.settled(), { notice: 'Stop calling tools now.' });

    const messages: MessageParam[] = [
      ...params.messages,
      { role: 'assistant', content: (await sdkStream.finalMessage()).content },
      reply,
    ];
    server.enqueueJson({
      id: 'msg_02',
      type: 'message',
      role: 'assistant',
      model: 'claude',
      content: [],
      stop_reason: 'end_turn',
      usage: {},
    });
    await client.messages.create({ ...params, messages });

    const sent = server.requests.at(-1)?.body.messages as {
      role: string;
      content: { type: string; tool_use_id?: string; id?: string; is_error?: boolean; content?: string }[];
    }[];
    const asked = sent[1]?.content.filter((b) => b.type === 'tool_use').map((b) => b.id);
    const answer = sent[2]?.content ?? [];
    expect(answer.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id)).toEqual(asked);
    expect(answer.map((b) => b.type)).toEqual(['tool_result', 'tool_result', 'tool_result', 'text']);
    expect(answer.map((b) => b.is_error ?? false)).toEqual([false, true, true, false]);
    expect(answer[1]?.content).toMatch(/rejected \(invalid_arguments\)/);
  });
});

describe('an Anthropic stream read by hand, when the connection drops', () => {
  it('fails the turn: a stopped block runs, a block whose JSON is whole but not stopped does not', async () => {
    const store = createWorkspace();
    const gate = createToolGate({ tools: [getWeather()], store });
    const a = toolUse(0, 'toolu_A', 'get_weather', '{"location":"Vienna"}');
    const b = toolUse(1, 'toolu_B', 'get_weather', '{"location":"Prague"}');
    const events = sse([
      messageStart,
      a.start,
      ...a.deltas,
      a.stop,
      b.start,
      ...b.deltas,
      b.stop,
      ...end('tool_use'),
    ]);
    // Block B's input all arrives; its content_block_stop, and what follows, never do.
    server.enqueue(events, { cutAfter: events.length - 3 });
    const reader = readAnthropicStream(gate);
    const error = await readByHand(reader, await client.messages.create({ ...params, stream: true }));

    expect(error).toBeInstanceOf(Error);
    const turn = await reader.settled();
    expect(
      turn.answers.map((answer) => [answer.id, answer.calls[0]?.status, answer.calls[0]?.reason?.code]),
    ).toEqual([
      ['toolu_A', 'committed', undefined],
      ['toolu_B', 'rejected', 'truncated'],
    ]);
    expect(gate.get('toolu_B')?.reason?.message).toContain(
      'the stream broke off before this call was complete',
    );
    expect(store.getState().weather).toEqual(['Vienna']);
    expect(
      anthropicReply(turn).content.map(
        (block) => 'tool_use_id' in block && [block.tool_use_id, block.is_error ?? false],
      ),
    ).toEqual([
      ['toolu_A', false],
      ['toolu_B', true],
    ]);
  });
});

describe('the assistant message, sent back through @anthropic-ai/sdk', () => {
  it('gives thinking with its signature, text, and each tool_use with its input as read, cut-off ones included', async () => {
    const thinking: Event[] = [
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'thinking_delta', thinking: 'Weather first, ' },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'thinking_delta', thinking: 'then the file.' },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA' },
      },
      { type: 'content_block_stop', index: 0 },
    ];
    const empty: Event[] = [
      { type: 'content_block_start', index: 4, content_block: { type: 'text', text: '' } },
      { type: 'content_block_stop', index: 4 },
    ];
    const weather = toolUse(2, 'toolu_W', 'get_weather', '{"location": "Graz"}');
    const file = toolUse(3, 'toolu_F', 'write_file', '{"path": "a.md", "content": "Login fails on Saf');
    const store = createWorkspace();
    const gate = createToolGate({ tools: [getWeather(), writeFile()], store });
    server.enqueue(
      sse([
        messageStart,
        ...thinking,
        ...text(1, 'On it.'),
        weather.start,
        ...weather.deltas,
        weather.stop,
        file.start,
        ...file.deltas,
        file.stop,
        ...empty,
        ...end('max_tokens'),
      ]),
    );
    const reader = readAnthropicStream(gate);
    await reader.read(client.messages.stream(params));
    const reply = anthropicReply(await reader.settled());

    const messages: MessageParam[] = [...params.messages, reader.assistantMessage(), reply];
    server.enqueueJson({
      id: 'msg_02',
      type: 'message',
      role: 'assistant',
      model: 'claude',
      content: [],
      stop_reason: 'end_turn',
      usage: {},
    });
    await client.messages.create({ ...params, messages });

    const sent = server.requests.at(-1)?.body.messages as { role: string; content: unknown }[];
    expect(sent[1]).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: 'Weather first, then the file.',
          signature: 'EqQBCgIYAhIM1gbcDa9GJwZA',
        },
        { type: 'text', text: 'On it.' },
        { type: 'tool_use', id: 'toolu_W', name: 'get_weather', input: { location: 'Graz' } },
        {
          type: 'tool_use',
          id: 'toolu_F',
          name: 'write_file',
          input: { path: 'a.md', content: 'Login fails on Saf' },
        },
      ],
    });
    expect(sent[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_W', content: '{"location":"Graz","temperature":18}' },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_F',
        content: expect.stringMatching(/rejected \(truncated\)/) as string,
        is_error: true,
      },
    ]);
  });
});
