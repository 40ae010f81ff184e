import { describe, expect, it } from 'vitest';
import { createToolGate, geminiReply, readGeminiStream, type GeminiChunk, type ToolDefinition } from '../../src/index.ts';
import { createWorkspace, getTime, getWeather, searchDocs, writeFile } from './support/tools.ts';

const part = (functionCall: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ functionCall, ...extra });
const chunk = (parts: unknown[], finishReason?: string): GeminiChunk => ({
  responseId: 'resp_g1',
  candidates: [{ index: 0, content: { role: 'model', parts } as never, ...(finishReason === undefined ? {} : { finishReason }) }],
});

function setup(tools: ToolDefinition[] = [getWeather(), getTime(), writeFile()]) {
  const store = createWorkspace();
  const gate = createToolGate({ tools, store, generateId: ((n) => () => `gen_${++n}`)(0) });
  return { store, gate, reader: readGeminiStream(gate, { previewIntervalMs: 0 }) };
}

describe('Gemini stream', () => {
  it('checks whole functionCall parts as they arrive, across chunks, and makes ids it never sends back', async () => {
    const { gate, store, reader } = setup();
    reader.push(chunk([part({ name: 'get_weather', args: { location: 'Tokyo' } }, { thoughtSignature: 'EpQC' })]));
    expect(gate.get('gen_1')).toMatchObject({ status: 'committed', generatedId: true, turn: 'resp_g1' });
    reader.push(chunk([part({ id: 'fc-2', name: 'get_weather', args: { location: 'Kyoto' } })]));
    reader.push(chunk([{ text: '' }], 'STOP'));
    const turn = await reader.settled();
    expect(store.getState().weather).toEqual(['Tokyo', 'Kyoto']);
    const reply = geminiReply(turn);
    expect(reply.parts).toEqual([
      { functionResponse: { name: 'get_weather', response: { output: { location: 'Tokyo', temperature: 18 } } } },
      { functionResponse: { name: 'get_weather', id: 'fc-2', response: { output: { location: 'Kyoto', temperature: 18 } } } },
    ]);
  });

  it("builds a Vertex call from partialArgs by JSON path, previews it, and checks it at the empty functionCall", async () => {
    const { gate, store, reader } = setup();
    reader.push(chunk([part({ name: 'write_file', willContinue: true })]));
    expect(gate.get('gen_1')?.status).toBe('pending');
    reader.push(chunk([part({ partialArgs: [{ jsonPath: '$.path', stringValue: 'notes/', willContinue: true }], willContinue: true })]));
    reader.push(chunk([part({ partialArgs: [{ jsonPath: '$.path', stringValue: 'a.md' }], willContinue: true })]));
    reader.push(chunk([part({ partialArgs: [{ jsonPath: '$.content', stringValue: 'Casa ', willContinue: true }], willContinue: true })]));
    expect(gate.get('gen_1')).toMatchObject({ status: 'pending', preview: { path: 'notes/a.md', content: 'Casa ' } });
    reader.push(chunk([part({ willContinue: true })]));
    reader.push(chunk([part({ partialArgs: [{ jsonPath: '$.content', stringValue: 'Lucio' }], willContinue: true })]));
    reader.push(chunk([part({})]));
    expect(gate.get('gen_1')).toMatchObject({ status: 'committed', input: { path: 'notes/a.md', content: 'Casa Lucio' } });
    expect(store.getState().files).toEqual({ 'notes/a.md': 'Casa Lucio' });
  });

  it('rejects a Vertex call still streaming at MAX_TOKENS as truncated', async () => {
    const { gate, store, reader } = setup();
    reader.push(chunk([part({ name: 'write_file', willContinue: true })]));
    reader.push(chunk([part({ partialArgs: [{ jsonPath: '$.path', stringValue: 'a.md' }], willContinue: true })]));
    reader.push(chunk([], 'MAX_TOKENS'));
    expect(gate.get('gen_1')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(reader.stopReason()).toBe('MAX_TOKENS');
    expect(store.getState().files).toEqual({});
  });

  it('reports MALFORMED_FUNCTION_CALL as the stop reason, with no call to answer', async () => {
    const { reader } = setup();
    reader.push({ candidates: [{ content: {}, finishReason: 'MALFORMED_FUNCTION_CALL' }] });
    expect(reader.stopReason()).toBe('MALFORMED_FUNCTION_CALL');
    expect((await reader.settled()).answers).toEqual([]);
  });

  it('rejects wrong value types by default, and repairs them for a tool that opted in', async () => {
    const bad = part({ name: 'search_docs', args: { query: 'orders', limit: '25', tags: '["open", "pending"]' } });
    const plain = setup([searchDocs()]);
    plain.reader.push(chunk([bad], 'STOP'));
    expect(plain.gate.get('gen_1')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_arguments' } });
    expect(geminiReply(await plain.reader.settled()).parts[0]).toMatchObject({
      functionResponse: { name: 'search_docs', response: { error: expect.stringMatching(/\/limit: must be integer[\s\S]*\/tags: must be array/) as string } },
    });

    const repaired = setup([searchDocs(['string_scalars', 'stringified_json'])]);
    repaired.reader.push(chunk([bad], 'STOP'));
    expect(repaired.gate.get('gen_1')).toMatchObject({ status: 'committed', input: { query: 'orders', limit: 25, tags: ['open', 'pending'] } });
    expect(repaired.gate.get('gen_1')?.repairs?.map((r) => r.kind)).toEqual(['string_scalars', 'stringified_json']);
  });
});
