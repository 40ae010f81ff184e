import OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolGate, openaiResponsesReply, readOpenAIResponsesStream, type ToolDefinition } from '../../src/index.ts';
import { DEFECTS, WRAPPER } from './support/defects.ts';
import { fragments } from './support/openai-chunks.ts';
import { startReplayServer, type ReplayServer, type SseEvent } from './support/replay-server.ts';
import { createWorkspace, getTime, getWeather, writeFile } from './support/tools.ts';

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

const created: Event = { type: 'response.created', response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] } };
const completed: Event = { type: 'response.completed', response: { id: 'resp_1', object: 'response', status: 'completed' } };

function item(id: string, callId: string, name: string, args: string, status = 'completed') {
  return { id, type: 'function_call', status, arguments: args, call_id: callId, name };
}

/** A function_call item streamed the documented way: added, deltas, arguments.done, output_item.done. */
function call(outputIndex: number, id: string, callId: string, name: string, args: string, size = 6): { added: Event[]; deltas: Event[]; done: Event[] } {
  return {
    added: [{ type: 'response.output_item.added', output_index: outputIndex, item: item(id, callId, name, '', 'in_progress') }],
    deltas: fragments(args, size).map((delta) => ({ type: 'response.function_call_arguments.delta', item_id: id, output_index: outputIndex, delta })),
    done: [
      { type: 'response.function_call_arguments.done', item_id: id, output_index: outputIndex, arguments: args },
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
    const deltas = a.deltas.flatMap((delta, i) => [delta, ...(b.deltas[i] === undefined ? [] : [b.deltas[i]])]);
    const { gate, store, settled, reader } = await turn(
      [
        created,
        { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_0', type: 'reasoning', summary: [] } },
        { type: 'response.output_item.done', output_index: 0, item: { id: 'rs_0', type: 'reasoning', summary: [] } },
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
        { type: 'response.output_item.done', output_index: 0, item: item('fc_1', 'call_F', 'write_file', cut, 'incomplete') },
        { type: 'response.incomplete', response: { id: 'resp_1', object: 'response', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } },
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
      expect(plain.gate.get('call_D')).toMatchObject({ status: 'rejected', reason: { code: defect.reason.code } });
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
    expect(plain.gate.get('call_Wrap')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });

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
    server.enqueue(sse([created, ...[ok, bad, stop].flatMap((c) => [...c.added, ...c.deltas, ...c.done]), completed]));
    const reader = readOpenAIResponsesStream(gate);
    await reader.read(await client.responses.create({ model: 'gpt-5', input: 'Go.', stream: true }));
    gate.cancel('call_STOP');
    const reply = openaiResponsesReply(await reader.settled(), { notice: 'Stop here.' });

    const input: ResponseInputItem[] = reply;
    server.enqueueJson({ id: 'resp_2', object: 'response', status: 'completed', output: [] });
    await client.responses.create({ model: 'gpt-5', previous_response_id: 'resp_1', input });
    const sent = server.requests.at(-1)?.body.input as { type?: string; call_id?: string; output?: string; role?: string }[];
    expect(sent.filter((entry) => entry.type === 'function_call_output').map((entry) => entry.call_id)).toEqual(['call_OK', 'call_BAD', 'call_STOP']);
    expect(sent.find((entry) => entry.call_id === 'call_BAD')?.output).toMatch(/invalid_arguments[\s\S]*location/);
    expect(sent.find((entry) => entry.call_id === 'call_STOP')?.output).toMatch(/cancelled \(user_cancelled\)/);
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'Stop here.' });
  });
});
