import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createToolGate, defineTool, isTerminal, type Limits, type ToolDefinition } from '../../src/index.ts';
import { geminiReply, readGeminiStream, type GeminiChunk } from '../../src/gemini.ts';
import { depthOf, readByHand } from './support/by-hand.ts';
import { createWorkspace, getTime, getWeather, searchDocs, writeFile } from '@toolgate/test-utils';

const part = (functionCall: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  functionCall,
  ...extra,
});
const chunk = (parts: unknown[], finishReason?: string): GeminiChunk => ({
  responseId: 'resp_g1',
  candidates: [
    {
      index: 0,
      content: { role: 'model', parts } as never,
      ...(finishReason === undefined ? {} : { finishReason }),
    },
  ],
});

function setup(tools: ToolDefinition[] = [getWeather(), getTime(), writeFile()]) {
  const store = createWorkspace();
  const gate = createToolGate({
    tools,
    store,
    generateId: (
      (n) => () =>
        `gen_${++n}`
    )(0),
  });
  return { store, gate, reader: readGeminiStream(gate, { previewIntervalMs: 0 }) };
}

describe('Gemini stream', () => {
  it('checks whole functionCall parts as they arrive, across chunks, and makes ids it never sends back', async () => {
    const { gate, store, reader } = setup();
    reader.push(
      chunk([part({ name: 'get_weather', args: { location: 'Tokyo' } }, { thoughtSignature: 'EpQC' })]),
    );
    expect(gate.get('gen_1')).toMatchObject({ status: 'committed', generatedId: true, turn: 'resp_g1' });
    reader.push(chunk([part({ id: 'fc-2', name: 'get_weather', args: { location: 'Kyoto' } })]));
    reader.push(chunk([{ text: '' }], 'STOP'));
    const turn = await reader.settled();
    expect(store.getState().weather).toEqual(['Tokyo', 'Kyoto']);
    const reply = geminiReply(turn);
    expect(reply.parts).toEqual([
      {
        functionResponse: {
          name: 'get_weather',
          response: { output: { location: 'Tokyo', temperature: 18 } },
        },
      },
      {
        functionResponse: {
          name: 'get_weather',
          id: 'fc-2',
          response: { output: { location: 'Kyoto', temperature: 18 } },
        },
      },
    ]);
  });

  it('builds a Vertex call from partialArgs by JSON path, previews it, and checks it at the empty functionCall', async () => {
    const { gate, store, reader } = setup();
    reader.push(chunk([part({ name: 'write_file', willContinue: true })]));
    expect(gate.get('gen_1')?.status).toBe('pending');
    reader.push(
      chunk([
        part({
          partialArgs: [{ jsonPath: '$.path', stringValue: 'notes/', willContinue: true }],
          willContinue: true,
        }),
      ]),
    );
    reader.push(
      chunk([part({ partialArgs: [{ jsonPath: '$.path', stringValue: 'a.md' }], willContinue: true })]),
    );
    reader.push(
      chunk([
        part({
          partialArgs: [{ jsonPath: '$.content', stringValue: 'Casa ', willContinue: true }],
          willContinue: true,
        }),
      ]),
    );
    expect(gate.get('gen_1')).toMatchObject({
      status: 'pending',
      preview: { path: 'notes/a.md', content: 'Casa ' },
    });
    reader.push(chunk([part({ willContinue: true })]));
    reader.push(
      chunk([part({ partialArgs: [{ jsonPath: '$.content', stringValue: 'Lucio' }], willContinue: true })]),
    );
    reader.push(chunk([part({})]));
    expect(gate.get('gen_1')).toMatchObject({
      status: 'committed',
      input: { path: 'notes/a.md', content: 'Casa Lucio' },
    });
    expect(store.getState().files).toEqual({ 'notes/a.md': 'Casa Lucio' });
  });

  it('rejects a Vertex call still streaming at MAX_TOKENS as truncated', async () => {
    const { gate, store, reader } = setup();
    reader.push(chunk([part({ name: 'write_file', willContinue: true })]));
    reader.push(
      chunk([part({ partialArgs: [{ jsonPath: '$.path', stringValue: 'a.md' }], willContinue: true })]),
    );
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
    const bad = part({
      name: 'search_docs',
      args: { query: 'orders', limit: '25', tags: '["open", "pending"]' },
    });
    const plain = setup([searchDocs()]);
    plain.reader.push(chunk([bad], 'STOP'));
    expect(plain.gate.get('gen_1')).toMatchObject({
      status: 'rejected',
      reason: { code: 'invalid_arguments' },
    });
    expect(geminiReply(await plain.reader.settled()).parts[0]).toMatchObject({
      functionResponse: {
        name: 'search_docs',
        response: {
          error: expect.stringMatching(/\/limit: must be integer[\s\S]*\/tags: must be array/) as string,
        },
      },
    });

    const repaired = setup([searchDocs(['string_scalars', 'stringified_json'])]);
    repaired.reader.push(chunk([bad], 'STOP'));
    expect(repaired.gate.get('gen_1')).toMatchObject({
      status: 'committed',
      input: { query: 'orders', limit: 25, tags: ['open', 'pending'] },
    });
    expect(repaired.gate.get('gen_1')?.repairs?.map((r) => r.kind)).toEqual([
      'string_scalars',
      'stringified_json',
    ]);
  });
});

/** A tool that takes any object, so that only the reader and the limits decide what happens to a call. */
const anything = defineTool({ name: 'record', inputSchema: { type: 'object' }, execute: (input) => input });

function vertex(limits: Partial<Limits> = {}, name = 'record') {
  const store = createWorkspace();
  const gate = createToolGate({
    tools: [anything],
    store,
    limits,
    generateId: (
      (n) => () =>
        `gen_${++n}`
    )(0),
  });
  const previews: unknown[] = [];
  gate.calls.subscribe((state) => {
    const call = state.records.get('gen_1');
    if (call?.status === 'pending' && call.preview !== undefined) previews.push(call.preview);
  });
  const reader = readGeminiStream(gate, { previewIntervalMs: 0 });
  reader.push(chunk([part({ name, willContinue: true })]));
  const send = (...partialArgs: Record<string, unknown>[]) =>
    reader.push(chunk([part({ partialArgs, willContinue: true })]));
  return { gate, reader, previews, send };
}

describe('Vertex partialArgs a model or a proxy got wrong', () => {
  it("rejects a path that sets an array's length as invalid_shape, instead of throwing a RangeError out of push", () => {
    const { gate, reader, send } = vertex();
    send({ jsonPath: '$.a[0]', stringValue: 'x' });
    expect(() => send({ jsonPath: '$.a.length', numberValue: -1 })).not.toThrow();
    expect(gate.get('gen_1')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });
    expect(gate.get('gen_1')?.reason?.message).toContain(
      'the partialArgs path "$.a.length" uses "$.a", an array, as an object',
    );
    reader.push(chunk([part({})], 'STOP'));
    expect(gate.get('gen_1')?.status).toBe('rejected');
  });

  it('rejects a huge array index at once, without a preview of four billion slots', () => {
    const { gate, previews, send } = vertex();
    send({ jsonPath: '$.a[0]', stringValue: 'x' });
    send({ jsonPath: '$.a[4294967294]', stringValue: 'y' });
    expect(gate.get('gen_1')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });
    expect(gate.get('gen_1')?.reason?.message).toContain(
      'skips array elements (index 4294967294 of an array of 1)',
    );
    expect(previews).toEqual([{ a: ['x'] }]);
  });

  it('rejects a path that is not one (a negative or fractional index) instead of dropping its value', () => {
    for (const jsonPath of ['$.a[-1]', '$.a[1.5]', 'a.b', '$..a', "$['a"]) {
      const { gate, send } = vertex();
      send({ jsonPath, stringValue: 'x' });
      expect(gate.get('gen_1')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });
      expect(gate.get('gen_1')?.reason?.message).toContain(
        `the partialArgs path ${JSON.stringify(jsonPath)} is not a path`,
      );
    }
  });

  it('rejects arguments that grow past maxArgumentChars as too_large as soon as they do', () => {
    const { gate, previews, send } = vertex({ maxArgumentChars: 100 });
    for (let i = 0; i < 20; i++) send({ jsonPath: '$.content', stringValue: 'word ', willContinue: true });
    expect(gate.get('gen_1')).toMatchObject({ status: 'rejected', reason: { code: 'too_large' } });
    expect(Math.max(...previews.map((p) => JSON.stringify(p).length))).toBeLessThanOrEqual(100);
  });

  it('rejects a path nested past maxDepth as too_deep, and never previews deeper than the limit', () => {
    const { gate, previews, send } = vertex({ maxDepth: 4 });
    send({ jsonPath: '$.a.b.c', stringValue: 'x' });
    expect(gate.get('gen_1')?.status).toBe('pending');
    send({ jsonPath: `$${'.a'.repeat(10_000)}`, stringValue: 'x' });
    expect(gate.get('gen_1')).toMatchObject({ status: 'rejected', reason: { code: 'too_deep' } });
    expect(previews.map(depthOf)).toEqual([3]);
  });

  it('keeps __proto__ an own key, which the gate refuses, and leaves Object.prototype alone', () => {
    const { gate, reader, send } = vertex();
    send({ jsonPath: '$.__proto__.polluted', boolValue: true });
    send({ jsonPath: "$['constructor']", stringValue: 'x' });
    reader.push(chunk([part({})], 'STOP'));
    expect(gate.get('gen_1')).toMatchObject({
      status: 'rejected',
      reason: { code: 'invalid_arguments', issues: [{ path: '/__proto__' }] },
    });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('rejects a multi_tool_use.parallel call with a path that is not one as invalid_shape, without throwing', () => {
    const { gate, send } = vertex({}, 'multi_tool_use.parallel');
    expect(() => send({ jsonPath: '$.tool_uses[-1]', stringValue: 'x' })).not.toThrow();
    expect(gate.get('gen_1')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });
  });

  it('rejects a value of the wrong type as invalid_shape', () => {
    const { gate, send } = vertex();
    send({ jsonPath: '$.n', numberValue: 'NaN' });
    expect(gate.get('gen_1')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });
    expect(gate.get('gen_1')?.reason?.message).toContain(
      'the partialArgs entry for "$.n" has a value of the wrong type',
    );
  });

  it('builds quoted names and whole arrays, and commits them', () => {
    const { gate, reader, send } = vertex();
    send({ jsonPath: "$['a.b']", stringValue: 'dotted' }, { jsonPath: '$["say \\"hi\\""]', boolValue: true });
    send(
      { jsonPath: '$.guests[0].name', stringValue: 'Ana' },
      { jsonPath: '$.guests[1].name', stringValue: 'Bo' },
    );
    send(
      { jsonPath: '$.guests[1].name', stringValue: 'b' },
      { jsonPath: '$.size', numberValue: 2 },
      { jsonPath: '$.note', nullValue: 'NULL_VALUE' },
    );
    reader.push(chunk([part({})], 'STOP'));
    expect(gate.get('gen_1')).toMatchObject({
      status: 'committed',
      input: {
        'a.b': 'dotted',
        'say "hi"': true,
        guests: [{ name: 'Ana' }, { name: 'Bob' }],
        size: 2,
        note: null,
      },
    });
  });

  const limits = { maxArgumentChars: 2_000, maxDepth: 8 };
  const key = fc.oneof(
    fc.constantFrom('a', 'b', '__proto__', 'constructor', 'length', 'toString', 'prototype'),
    fc.string({ maxLength: 4 }),
  );
  const step = fc.oneof(
    key.map((name) => `.${name}`),
    key.map((name) => `['${name}']`),
    fc
      .oneof(
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom(-1, 1.5, 4_294_967_294, 4_294_967_295, 2 ** 53, 1e21),
      )
      .map((index) => `[${index}]`),
    fc.constantFrom('.', '[', ']', "['", '[-0]', '[01]', '[ 1]'),
  );
  const jsonPath = fc.oneof(
    fc.array(step, { maxLength: 6 }).map((steps) => `$${steps.join('')}`),
    fc.integer({ min: 1, max: 200 }).map((n) => `$${'.a'.repeat(n)}`),
    fc.integer({ min: 1, max: 200 }).map((n) => `$.a${'[0]'.repeat(n)}`),
    fc.string(),
  );
  const value = fc.oneof(
    fc.string({ maxLength: 20 }).map((text) => ({ stringValue: text })),
    fc.integer({ min: 1, max: 3_000 }).map((n) => ({ stringValue: 'x'.repeat(n) })),
    fc.double().map((number) => ({ numberValue: number })),
    fc.boolean().map((bool) => ({ boolValue: bool })),
    fc.constant({ nullValue: null }),
    fc.anything().map((anyValue) => ({ stringValue: anyValue })),
    fc.constant({}),
  );
  const entry = fc
    .tuple(jsonPath, value)
    .map(([path, given]) => ({ jsonPath: path, ...given, willContinue: true }));

  it('never throws, never previews past the limits, and settles every call, whatever the entries say', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('record', 'multi_tool_use.parallel'),
        fc.array(fc.array(entry, { minLength: 1, maxLength: 4 }), { maxLength: 10 }),
        (name, chunks) => {
          const { gate, reader, previews, send } = vertex(limits, name);
          for (const entries of chunks) send(...entries);
          reader.push(chunk([part({})], 'STOP'));
          const call = gate.get('gen_1');
          expect(call !== undefined && isTerminal(call.status)).toBe(true);
          if (call?.status === 'rejected')
            expect(['invalid_shape', 'too_large', 'too_deep', 'invalid_arguments']).toContain(
              call.reason.code,
            );
          for (const preview of previews) {
            expect(depthOf(preview)).toBeLessThanOrEqual(limits.maxDepth);
            expect(JSON.stringify(preview).length).toBeLessThanOrEqual(limits.maxArgumentChars);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('a Gemini stream read by hand', () => {
  it('fails the turn when the stream throws: a streamed call whose arguments look whole does not run', async () => {
    const { gate, store } = setup();
    const reader = readGeminiStream(gate, { previewIntervalMs: 0 });
    async function* broken(): AsyncGenerator<GeminiChunk> {
      yield chunk([part({ name: 'get_weather', args: { location: 'Oslo' } })]);
      yield chunk([part({ name: 'write_file', willContinue: true })]);
      yield chunk([
        part({
          partialArgs: [
            { jsonPath: '$.path', stringValue: 'a.md' },
            { jsonPath: '$.content', stringValue: 'Hi' },
          ],
          willContinue: true,
        }),
      ]);
      await Promise.resolve();
      throw new TypeError('fetch failed');
    }
    const error = await readByHand(reader, broken());
    expect(error).toBeInstanceOf(TypeError);
    const turn = await reader.settled();
    expect(turn.answers.map((answer) => [answer.calls[0]?.status, answer.calls[0]?.reason?.code])).toEqual([
      ['committed', undefined],
      ['rejected', 'truncated'],
    ]);
    expect(gate.get('gen_2')?.reason?.message).toBe(
      'the stream broke off before this call was complete (fetch failed); nothing was run',
    );
    expect(store.getState()).toEqual({ files: {}, weather: ['Oslo'] });
  });
});

describe("the model's content, to send back", () => {
  it('keeps every part with its thought signature, joins plain text deltas, and builds streamed calls whole', async () => {
    const { reader } = setup();
    reader.push(
      chunk([
        { text: 'Let me ', thought: true },
        { text: 'think.', thought: true },
      ]),
    );
    reader.push(chunk([{ text: 'Booking ' }, { text: 'it.' }]));
    reader.push(
      chunk([part({ name: 'get_weather', args: { location: 'Rome' } }, { thoughtSignature: 'sig-1' })]),
    );
    reader.push(chunk([part({ name: 'write_file', willContinue: true }, { thoughtSignature: 'sig-2' })]));
    reader.push(
      chunk([
        part({
          partialArgs: [
            { jsonPath: '$.path', stringValue: 'a.md' },
            { jsonPath: '$.content', stringValue: 'Ca', willContinue: true },
          ],
          willContinue: true,
        }),
      ]),
    );
    reader.push(
      chunk([part({ partialArgs: [{ jsonPath: '$.content', stringValue: 'sa' }], willContinue: true })]),
    );
    reader.push(chunk([part({})]));
    reader.push(chunk([{ text: '', thoughtSignature: 'sig-3' }], 'STOP'));
    reader.push(chunk([{ text: 'after the end' }]));
    await reader.settled();
    expect(reader.modelContent()).toEqual({
      role: 'model',
      parts: [
        { text: 'Let me think.', thought: true },
        { text: 'Booking it.' },
        { functionCall: { name: 'get_weather', args: { location: 'Rome' } }, thoughtSignature: 'sig-1' },
        {
          functionCall: { name: 'write_file', args: { path: 'a.md', content: 'Casa' } },
          thoughtSignature: 'sig-2',
        },
        { text: '', thoughtSignature: 'sig-3' },
      ],
    });
  });
});
