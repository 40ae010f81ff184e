import { describe, expect, it } from 'vitest';
import { aiSdkReply, createToolGate, readAiSdkStream, type AiSdkStreamPart } from '../../src/index.ts';
import { fragments } from './support/openai-chunks.ts';
import { createWorkspace, getWeather, listTickets, writeFile } from './support/tools.ts';

function setup(tools = [getWeather(), writeFile(), listTickets()]) {
  const store = createWorkspace();
  const gate = createToolGate({ tools, store });
  return { store, gate, reader: readAiSdkStream(gate, { previewIntervalMs: 0 }) };
}

const input = (id: string, toolName: string, text: string): AiSdkStreamPart[] => [
  { type: 'tool-input-start', id, toolName },
  ...fragments(text, 5).map((delta) => ({ type: 'tool-input-delta', id, delta })),
  { type: 'tool-input-end', id },
];

describe('AI SDK stream parts', () => {
  it('checks each call at tool-input-end from its own deltas, not from the SDK-parsed tool-call part', async () => {
    const { gate, store, reader } = setup();
    for (const part of [
      { type: 'start-step' },
      ...input('call_L', 'get_weather', '{"location":"Lima"}'),
      // The following tool-call part is the SDK's own reading; the gate already decided from the deltas.
      { type: 'tool-call', toolCallId: 'call_L', toolName: 'get_weather', input: { location: 'Quito' } },
      ...input('call_Q', 'get_weather', '{"location":"Quito"}'),
      { type: 'finish-step', finishReason: 'tool-calls' },
    ])
      reader.push(part);
    expect(gate.get('call_L')).toMatchObject({ status: 'committed', input: { location: 'Lima' } });
    expect(store.getState().weather).toEqual(['Lima', 'Quito']);
    expect(aiSdkReply(await reader.settled())).toEqual([
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_L', toolName: 'get_weather', output: { type: 'json', value: { location: 'Lima', temperature: 18 } } },
          { type: 'tool-result', toolCallId: 'call_Q', toolName: 'get_weather', output: { type: 'json', value: { location: 'Quito', temperature: 18 } } },
        ],
      },
    ]);
  });

  it('reads the UI message stream chunks (toolCallId, inputTextDelta, tool-input-available) the same way', () => {
    const { gate, reader } = setup();
    reader.push({ type: 'tool-input-start', toolCallId: 'call_U', toolName: 'get_weather' });
    reader.push({ type: 'tool-input-delta', toolCallId: 'call_U', inputTextDelta: '{"location":"Li' });
    expect(gate.get('call_U')).toMatchObject({ status: 'pending', preview: { location: 'Li' } });
    reader.push({ type: 'tool-input-delta', toolCallId: 'call_U', inputTextDelta: 'ma"}' });
    reader.push({ type: 'tool-input-available', toolCallId: 'call_U', toolName: 'get_weather', input: { location: 'Lima' } });
    expect(gate.get('call_U')?.status).toBe('committed');
  });

  it('takes the input of a call that streamed none from its tool-call part', () => {
    const { gate, reader } = setup();
    reader.push({ type: 'tool-input-start', id: 'call_N', toolName: 'list_open_tickets' });
    reader.push({ type: 'tool-input-end', id: 'call_N' });
    reader.push({ type: 'tool-call', toolCallId: 'call_N', toolName: 'list_open_tickets', input: '{}' });
    reader.push({ type: 'tool-call', toolCallId: 'call_W', toolName: 'get_weather', input: '{"location":"Lima"}' });
    expect(gate.get('call_N')?.status).toBe('committed');
    expect(gate.get('call_W')?.status).toBe('committed');
  });

  it('rejects a call cut off by finishReason "length" as truncated', () => {
    const { gate, store, reader } = setup();
    reader.push({ type: 'tool-input-start', id: 'call_F', toolName: 'write_file' });
    reader.push({ type: 'tool-input-delta', id: 'call_F', delta: '{"path":"a.md","content":"half a sen' });
    reader.push({ type: 'tool-input-end', id: 'call_F' });
    expect(gate.get('call_F')?.status).toBe('pending');
    reader.push({ type: 'finish-step', finishReason: { unified: 'length', raw: 'max_tokens' } });
    expect(gate.get('call_F')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(store.getState().files).toEqual({});
  });
});
