import OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolGate, type ToolDefinition } from '../../src/index.ts';
import { openaiResponsesReply, readOpenAIResponsesStream } from '../../src/openai.ts';
import { readByHand } from './support/by-hand.ts';
import {
  createWorkspace,
  DEFECTS,
  fragments,
  getTime,
  getWeather,
  type ReplayServer,
  type SseEvent,
  startReplayServer,
  WRAPPER,
  writeFile,
} from '@toolgate/test-utils';

let server: ReplayServer;
let client: OpenAI;

beforeAll(async () => {
  server = await startReplayServer();
  client = new OpenAI({ apiKey: 'test-key', baseURL: `${server.url}/v1`, maxRetries: 0 });
});
afterAll(() => server.close());

type Event = { type: string } & Record<string, unknown>;

/** Numbers the events and frames them as Responses SSE (`event:` + `data:`). */
function sse(events: readonly Event[]): SseEvent[] {
  return events.map((event, sequence_number) => ({ event: event.type, data: { ...event, sequence_number } }));
}

const created: Event = {
  type: 'response.created',
  response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] },
};
const completed: Event = {
  type: 'response.completed',
  response: { id: 'resp_1', object: 'response', status: 'completed' },
};

function item(id: string, callId: string, name: string, args: string, status = 'completed') {
  return { id, type: 'function_call', status, arguments: args, call_id: callId, name };
}

/** A function_call item streamed the documented way: added, deltas, arguments.done, output_item.done. */
function call(
  outputIndex: number,
  id: string,
  callId: string,
  name: string,
  args: string,
  size = 6,
): { added: Event[]; deltas: Event[]; done: Event[] } {
  return {
    added: [
      {
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: item(id, callId, name, '', 'in_progress'),
      },
    ],
    deltas: fragments(args, size).map((delta) => ({
      type: 'response.function_call_arguments.delta',
      item_id: id,
      output_index: outputIndex,
      delta,
    })),
    done: [
      {
        type: 'response.function_call_arguments.done',
        item_id: id,
        output_index: outputIndex,
        arguments: args,
      },
      { type: 'response.output_item.done', output_index: outputIndex, item: item(id, callId, name, args) },
    ],
  };
}

async function turn(events: readonly Event[], tools: ToolDefinition[]) {
  const store = createWorkspace();
  const gate = createToolGate({ tools, store });
  server.enqueue(sse(events));
  const reader = readOpenAIResponsesStream(gate, { previewIntervalMs: 0 });
  await reader.read(await client.responses.create({ model: 'gpt-5', input: 'Go.', stream: true }));
  return { gate, store, reader, settled: await reader.settled() };
}

describe('OpenAI Responses stream, through the openai SDK', () => {
  it('keys interleaved parallel calls by item_id after a reasoning item, and commits both', async () => {
    const a = call(1, 'fc_1', 'call_A', 'get_weather', '{"location":"Lisbon"}');
    const b = call(2, 'fc_2', 'call_B', 'get_weather', '{"location":"Porto"}');
    const deltas = a.deltas.flatMap((delta, i) => [
      delta,
      ...(b.deltas[i] === undefined ? [] : [b.deltas[i]]),
    ]);
    const { gate, store, settled, reader } = await turn(
      [
        created,
        {
          type: 'response.output_item.added',
          output_index: 0,
          item: { id: 'rs_0', type: 'reasoning', summary: [] },
        },
        {
          type: 'response.output_item.done',
          output_index: 0,
          item: { id: 'rs_0', type: 'reasoning', summary: [] },
        },
        ...a.added,
        ...b.added,
        ...deltas,
        ...b.deltas.slice(a.deltas.length),
        ...a.done,
        ...b.done,
        completed,
      ],
      [getWeather()],
    );
    expect(settled.answers.map((answer) => [answer.id, answer.calls[0]?.status])).toEqual([
      ['call_A', 'committed'],
      ['call_B', 'committed'],
    ]);
    expect(gate.get('call_A')).toMatchObject({ turn: 'resp_1', source: 'openai-responses' });
    expect(store.getState().weather).toEqual(['Lisbon', 'Porto']);
    expect(reader.stopReason()).toBe('completed');
  });

  it('rejects a call of an incomplete response as truncated and runs nothing', async () => {
    const cut = '{"path":"a.md","content":"Login fails on Saf';
    const c = call(0, 'fc_1', 'call_F', 'write_file', cut);
    const { gate, store, reader } = await turn(
      [
        created,
        ...c.added,
        ...c.deltas,
        {
          type: 'response.output_item.done',
          output_index: 0,
          item: item('fc_1', 'call_F', 'write_file', cut, 'incomplete'),
        },
        {
          type: 'response.incomplete',
          response: {
            id: 'resp_1',
            object: 'response',
            status: 'incomplete',
            incomplete_details: { reason: 'max_output_tokens' },
          },
        },
      ],
      [writeFile(['trailing_text'])],
    );
    expect(gate.get('call_F')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(store.getState().files).toEqual({});
    expect(reader.stopReason()).toBe('max_output_tokens');
  });

  it('truncates a call whose stream ended before response.completed', async () => {
    const c = call(0, 'fc_1', 'call_T', 'get_time', '{"timezone":"UTC"}');
    const { gate } = await turn([created, ...c.added, ...c.deltas.slice(0, 2)], [getTime()]);
    expect(gate.get('call_T')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
  });

  it('shows the call pending, with a preview, from output_item.added until arguments.done', async () => {
    const store = createWorkspace();
    const gate = createToolGate({ tools: [getTime()], store });
    const c = call(0, 'fc_1', 'call_T', 'get_time', '{"timezone":"Europe/Lisbon"}', 3);
    const reader = readOpenAIResponsesStream(gate, { previewIntervalMs: 0 });
    for (const event of [created, ...c.added]) reader.push(event);
    expect(gate.get('call_T')).toMatchObject({ status: 'pending', name: 'get_time' });
    for (const event of c.deltas.slice(0, 6)) reader.push(event);
    expect(gate.get('call_T')).toMatchObject({ status: 'pending', preview: { timezone: 'Europ' } });
    for (const event of [...c.deltas.slice(6), ...c.done]) reader.push(event);
    expect(gate.get('call_T')?.status).toBe('committed');
  });

  for (const defect of DEFECTS) {
    it(`rejects ${defect.defect} by default and repairs it only on opt-in`, async () => {
      const c = call(0, 'fc_1', 'call_D', defect.name, defect.args);
      const events = [created, ...c.added, ...c.deltas, ...c.done, completed];
      const plain = await turn(events, [defect.tool()]);
      expect(plain.gate.get('call_D')).toMatchObject({
        status: 'rejected',
        reason: { code: defect.reason.code },
      });
      expect(plain.gate.get('call_D')?.reason?.message).toMatch(defect.reason.message);
      if (defect.repaired !== undefined) {
        const repaired = await turn(events, [defect.tool([defect.repair])]);
        expect(repaired.gate.get('call_D')).toMatchObject({ status: 'committed', input: defect.repaired });
        expect(repaired.gate.get('call_D')?.repairs?.map((r) => r.kind)).toContain(defect.repair);
      }
    });
  }

  it('rejects a multi_tool_use.parallel item, or unwraps it on opt-in and answers its call_id once', async () => {
    const c = call(0, 'fc_W', 'call_Wrap', 'multi_tool_use.parallel', WRAPPER);
    const events = [created, ...c.added, ...c.deltas, ...c.done, completed];
    const plain = await turn(events, [getWeather(), getTime()]);
    expect(plain.gate.get('call_Wrap')).toMatchObject({
      status: 'rejected',
      reason: { code: 'invalid_shape' },
    });

    const unwrapped = await turn(events, [getWeather(['parallel_wrapper']), getTime(['parallel_wrapper'])]);
    expect(unwrapped.store.getState().weather).toEqual(['Rome']);
    const reply = openaiResponsesReply(unwrapped.settled);
    expect(reply.map((entry) => 'call_id' in entry && entry.call_id)).toEqual(['call_Wrap']);
  });

  it('answers a mixed turn with one function_call_output per call_id, accepted by the SDK', async () => {
    const slow = { ...getTime(), execute: () => new Promise<string>(() => undefined) };
    const ok = call(0, 'fc_1', 'call_OK', 'get_weather', '{"location":"Lisbon"}');
    const bad = call(1, 'fc_2', 'call_BAD', 'get_weather', '{"unit":"kelvin"}');
    const stop = call(2, 'fc_3', 'call_STOP', 'get_time', '{"timezone":"UTC"}');
    const store = createWorkspace();
    const gate = createToolGate({ tools: [getWeather(), slow], store });
    server.enqueue(
      sse([created, ...[ok, bad, stop].flatMap((c) => [...c.added, ...c.deltas, ...c.done]), completed]),
    );
    const reader = readOpenAIResponsesStream(gate);
    await reader.read(await client.responses.create({ model: 'gpt-5', input: 'Go.', stream: true }));
    gate.cancel('call_STOP');
    const reply = openaiResponsesReply(await reader.settled(), { notice: 'Stop here.' });

    const input: ResponseInputItem[] = reply;
    server.enqueueJson({ id: 'resp_2', object: 'response', status: 'completed', output: [] });
    await client.responses.create({ model: 'gpt-5', previous_response_id: 'resp_1', input });
    const sent = server.requests.at(-1)?.body.input as {
      type?: string;
      call_id?: string;
      output?: string;
      role?: string;
    }[];
    expect(
      sent.filter((entry) => entry.type === 'function_call_output').map((entry) => entry.call_id),
    ).toEqual(['call_OK', 'call_BAD', 'call_STOP']);
    expect(sent.find((entry) => entry.call_id === 'call_BAD')?.output).toMatch(
      /invalid_arguments[\s\S]*location/,
    );
    expect(sent.find((entry) => entry.call_id === 'call_STOP')?.output).toMatch(
      /cancelled \(user_cancelled\)/,
    );
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'Stop here.' });
  });
});

describe('an OpenAI Responses stream read by hand, when the connection drops', () => {
  it('fails the turn: a call the provider finished runs, one whose JSON is whole but not done does not', async () => {
    const store = createWorkspace();
    const gate = createToolGate({ tools: [getWeather()], store });
    const a = call(0, 'fc_1', 'call_A', 'get_weather', '{"location":"Lisbon"}');
    const b = call(1, 'fc_2', 'call_B', 'get_weather', '{"location":"Porto"}');
    const events = sse([
      created,
      ...a.added,
      ...a.deltas,
      ...a.done,
      ...b.added,
      ...b.deltas,
      ...b.done,
      completed,
    ]);
    // Call B's arguments all arrive; its arguments.done, and what follows, never do.
    server.enqueue(events, { cutAfter: events.length - 3 });
    const reader = readOpenAIResponsesStream(gate);
    const error = await readByHand(
      reader,
      await client.responses.create({ model: 'gpt-5', input: 'Go.', stream: true }),
    );

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
    expect(store.getState().weather).toEqual(['Lisbon']);
    expect(reader.outputItems()).toEqual([
      item('fc_1', 'call_A', 'get_weather', '{"location":"Lisbon"}'),
      item('fc_2', 'call_B', 'get_weather', '{"location":"Porto"}', 'incomplete'),
    ]);
  });
});

describe('the output items, sent back with store: false through the openai SDK', () => {
  it('gives every item the stream carried, as the API sent it, and the API gets them before the outputs', async () => {
    const reasoning = {
      id: 'rs_0',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Both cities.' }],
      encrypted_content: 'gAAAAB…',
    };
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Checking both.', annotations: [] }],
    };
    const a = call(2, 'fc_1', 'call_A', 'get_weather', '{"location":"Lisbon"}');
    const b = call(3, 'fc_2', 'call_B', 'get_weather', '{"location":["Porto"]}');
    const store = createWorkspace();
    const gate = createToolGate({ tools: [getWeather()], store });
    server.enqueue(
      sse([
        created,
        {
          type: 'response.output_item.added',
          output_index: 0,
          item: { ...reasoning, summary: [], encrypted_content: null },
        },
        { type: 'response.output_item.done', output_index: 0, item: reasoning },
        {
          type: 'response.output_item.added',
          output_index: 1,
          item: { ...message, status: 'in_progress', content: [] },
        },
        {
          type: 'response.output_text.delta',
          item_id: 'msg_1',
          output_index: 1,
          content_index: 0,
          delta: 'Checking both.',
        },
        { type: 'response.output_item.done', output_index: 1, item: message },
        ...a.added,
        ...a.deltas,
        ...a.done,
        ...b.added,
        ...b.deltas,
        ...b.done,
        completed,
      ]),
    );
    const reader = readOpenAIResponsesStream(gate);
    await reader.read(
      await client.responses.create({ model: 'gpt-5', input: 'Go.', stream: true, store: false }),
    );
    const reply = openaiResponsesReply(await reader.settled());

    server.enqueueJson({ id: 'resp_2', object: 'response', status: 'completed', output: [] });
    // Items other than function calls are typed loosely (as the API sent them), so the SDK's type is asserted.
    const input = [
      { role: 'user' as const, content: 'Go.' },
      ...reader.outputItems(),
      ...reply,
    ] as ResponseInputItem[];
    await client.responses.create({ model: 'gpt-5', store: false, input });

    const sent = server.requests.at(-1)?.body.input as Record<string, unknown>[];
    expect(sent).toEqual([
      { role: 'user', content: 'Go.' },
      reasoning,
      message,
      item('fc_1', 'call_A', 'get_weather', '{"location":"Lisbon"}'),
      item('fc_2', 'call_B', 'get_weather', '{"location":["Porto"]}'),
      { type: 'function_call_output', call_id: 'call_A', output: '{"location":"Lisbon","temperature":18}' },
      {
        type: 'function_call_output',
        call_id: 'call_B',
        output: expect.stringMatching(/rejected \(invalid_arguments\)/) as string,
      },
    ]);
  });
});
