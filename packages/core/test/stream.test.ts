import fc from 'fast-check';
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createToolGate, defineTool, isTerminal, type ToolGate, type TurnReader } from '../src/index.ts';
import {
  openaiChatReply,
  readOpenAIChatStream,
  readOpenAIResponsesStream,
  type OpenAIChatChunk,
} from '../src/openai.ts';
import { readAiSdkStream } from '../src/ai-sdk.ts';
import { readAnthropicStream } from '../src/anthropic.ts';
import { readGeminiStream } from '../src/gemini.ts';
import { createFakeClock, createWorkspace, getTime, writeFile } from '@toolgate/test-utils';
import { depthOf } from './providers/support/by-hand.ts';

const delta = (index: number, fields: { id?: string; name?: string; args?: string }): OpenAIChatChunk => ({
  id: 'chatcmpl-S',
  choices: [
    {
      index: 0,
      delta: {
        tool_calls: [
          {
            index,
            ...(fields.id === undefined ? {} : { id: fields.id }),
            function: {
              ...(fields.name === undefined ? {} : { name: fields.name }),
              ...(fields.args === undefined ? {} : { arguments: fields.args }),
            },
          },
        ],
      },
      finish_reason: null,
    },
  ],
});
const finish = (reason: string): OpenAIChatChunk => ({
  id: 'chatcmpl-S',
  choices: [{ index: 0, delta: {}, finish_reason: reason }],
});

describe('streamed calls in the gate', () => {
  it('batches preview updates: at most one store update per interval, and the latest preview after it', () => {
    const clock = createFakeClock();
    const gate = createToolGate({ tools: [writeFile()], store: createWorkspace(), clock });
    const previews: unknown[] = [];
    gate.calls.subscribe((state) => {
      const call = state.records.get('call_F');
      if (call?.status === 'pending' && call.preview !== undefined) previews.push(call.preview);
    });
    const reader = readOpenAIChatStream(gate, { clock, previewIntervalMs: 50 });
    reader.push(delta(0, { id: 'call_F', name: 'write_file', args: '{"path":"a.md","content":"' }));
    for (let i = 0; i < 500; i++) reader.push(delta(0, { args: 'word ' }));
    expect(previews).toHaveLength(1);
    clock.advance(50);
    expect(previews).toHaveLength(2);
    expect(previews[1]).toEqual({ path: 'a.md', content: 'word '.repeat(500) });
    reader.push(delta(0, { args: '"}' }));
    reader.push(finish('tool_calls'));
    expect(gate.get('call_F')?.status).toBe('committed');
    expect(clock.pending).toBe(0);
  });

  it('rejects a streamed call as too_large as soon as it passes the limit, without waiting for the rest', () => {
    const gate = createToolGate({
      tools: [writeFile()],
      store: createWorkspace(),
      limits: { maxArgumentChars: 1_000 },
    });
    const reader = readOpenAIChatStream(gate);
    reader.push(delta(0, { id: 'call_F', name: 'write_file', args: '{"path":"a.md","content":"' }));
    for (let i = 0; i < 200; i++) reader.push(delta(0, { args: 'xxxxxxxxxx' }));
    expect(gate.get('call_F')).toMatchObject({ status: 'rejected', reason: { code: 'too_large' } });
    reader.push(finish('tool_calls'));
    expect(gate.get('call_F')?.status).toBe('rejected');
  });

  it('cancels every unfinished call when the stream is aborted, and still answers each one', async () => {
    const gate = createToolGate({ tools: [getTime()], store: createWorkspace() });
    const controller = new AbortController();
    const reader = readOpenAIChatStream(gate, { signal: controller.signal });
    reader.push(delta(0, { id: 'call_A', name: 'get_time', args: '{"timezone":"U' }));
    controller.abort();
    expect(gate.get('call_A')).toMatchObject({ status: 'cancelled', reason: { code: 'user_cancelled' } });
    reader.push(delta(0, { args: 'TC"}' }));
    reader.push(finish('tool_calls'));
    expect(gate.get('call_A')?.status).toBe('cancelled');
    expect(openaiChatReply(await reader.settled()).map((m) => m.role === 'tool' && m.tool_call_id)).toEqual([
      'call_A',
    ]);
  });

  it('lets go of its abort listener once the turn is over: one signal can span any number of turns', async () => {
    const gate = createToolGate({ tools: [getTime()], store: createWorkspace() });
    const controller = new AbortController();
    const listeners = () => getEventListeners(controller.signal, 'abort').length;
    for (let turn = 0; turn < 20; turn++) {
      const reader = readOpenAIChatStream(gate, { signal: controller.signal });
      expect(listeners()).toBe(1);
      reader.push(delta(0, { id: `call_${turn}`, name: 'get_time', args: '{"timezone":"UTC"}' }));
      if (turn % 3 === 0) reader.push(finish('tool_calls'));
      else if (turn % 3 === 1) reader.fail(new Error('socket hang up'));
      else reader.abort('the person stopped it');
      expect(listeners()).toBe(0);
      await reader.settled();
    }
    // Still live for a turn in flight: an abort cancels its open call.
    const reader = readOpenAIChatStream(gate, { signal: controller.signal });
    reader.push(delta(0, { id: 'call_last', name: 'get_time', args: '{"timezone":"U' }));
    controller.abort();
    expect(gate.get('call_last')).toMatchObject({ status: 'cancelled', reason: { code: 'user_cancelled' } });
    expect(listeners()).toBe(0);
  });

  it('truncates unfinished calls and rethrows when the stream itself fails', async () => {
    const gate = createToolGate({ tools: [getTime()], store: createWorkspace() });
    const reader = readOpenAIChatStream(gate);
    async function* broken() {
      yield delta(0, { id: 'call_A', name: 'get_time', args: '{"timezone":' });
      await Promise.resolve();
      throw new Error('socket hang up');
    }
    await expect(reader.read(broken())).rejects.toThrow('socket hang up');
    expect(gate.get('call_A')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(gate.get('call_A')?.reason?.message).toContain('socket hang up');
  });

  it('runs nothing the provider did not finish when the stream fails, even a call whose JSON is whole', async () => {
    const gate = createToolGate({ tools: [getTime()], store: createWorkspace() });
    const reader = readOpenAIChatStream(gate);
    async function* broken() {
      yield delta(0, { id: 'call_A', name: 'get_time', args: '{"timezone":"UTC"}' });
      await Promise.resolve();
      throw new Error('read ECONNRESET');
    }
    await expect(reader.read(broken())).rejects.toThrow('ECONNRESET');
    expect(gate.get('call_A')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
  });

  it('runs nothing the provider did not finish when it reports an error event, even a call whose JSON is whole', () => {
    const gate = createToolGate({ tools: [getTime()], store: createWorkspace() });
    const reader = readAnthropicStream(gate);
    reader.push({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_A', name: 'get_time', input: {} },
    });
    reader.push({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: '{"timezone":"UTC"}' },
    });
    reader.push({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(gate.get('toolu_A')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
  });

  it('answers a call whose name never came with a rejection under its id', async () => {
    const gate = createToolGate({ tools: [getTime()], store: createWorkspace() });
    const reader = readOpenAIChatStream(gate);
    reader.push(delta(0, { id: 'call_X', args: '{}' }));
    reader.push(finish('tool_calls'));
    expect(gate.get('call_X')).toMatchObject({ status: 'rejected', reason: { code: 'invalid_shape' } });
    expect((await reader.settled()).answers.map((a) => a.id)).toEqual(['call_X']);
  });

  it('stops previewing arguments nested past the depth limit, and the gate rejects them as too_deep', () => {
    const gate = createToolGate({ tools: [writeFile()], store: createWorkspace() });
    const reader = readOpenAIChatStream(gate, { previewIntervalMs: 0 });
    reader.push(delta(0, { id: 'call_D', name: 'write_file', args: '{"path":' + '['.repeat(5_000) }));
    reader.push(delta(0, { args: ']'.repeat(5_000) + '}' }));
    reader.push(finish('tool_calls'));
    expect(gate.get('call_D')).toMatchObject({ status: 'rejected', reason: { code: 'too_deep' } });
  });
});

describe('failing a turn by hand', () => {
  it('truncates what is not complete, resolves settled(), and makes a later end() change nothing', async () => {
    const gate = createToolGate({ tools: [getTime()], store: createWorkspace() });
    const reader = readOpenAIChatStream(gate);
    reader.push(delta(0, { id: 'call_A', name: 'get_time', args: '{"timezone":"UTC"}' }));
    reader.fail('socket closed');
    reader.end();
    reader.push(finish('tool_calls'));
    expect(gate.get('call_A')).toMatchObject({
      status: 'rejected',
      reason: {
        code: 'truncated',
        message: 'the stream broke off before this call was complete (socket closed); nothing was run',
      },
    });
    expect((await reader.settled()).answers.map((answer) => answer.calls[0]?.status)).toEqual(['rejected']);
  });

  it('says only that the stream broke off when given no error, and does nothing after abort()', () => {
    const gate = createToolGate({ tools: [getTime()], store: createWorkspace() });
    const failed = readOpenAIChatStream(gate);
    failed.push(delta(0, { id: 'call_A', name: 'get_time', args: '{"timezone":' }));
    failed.fail();
    expect(gate.get('call_A')?.reason?.message).toBe(
      'the stream broke off before this call was complete; nothing was run',
    );

    const aborted = readOpenAIChatStream(gate);
    aborted.push(delta(0, { id: 'call_B', name: 'get_time', args: '{"timezone":' }));
    aborted.abort();
    aborted.fail(new Error('late'));
    expect(gate.get('call_B')).toMatchObject({ status: 'cancelled', reason: { code: 'user_cancelled' } });
  });
});

/** A tool that takes any object: only the readers and the limits decide what happens to a call. */
const anything = defineTool({ name: 'record', inputSchema: { type: 'object' }, execute: (input) => input });

type Call = {
  readonly id: string;
  readonly name: string;
  readonly pieces: readonly string[];
  readonly text: string;
};

/** Each reader, and how its provider streams a list of calls. */
const READERS: {
  readonly name: string;
  readonly read: (gate: ToolGate) => TurnReader<never>;
  readonly events: (calls: readonly Call[]) => unknown[];
}[] = [
  {
    name: 'OpenAI Chat',
    read: (gate) => readOpenAIChatStream(gate, { previewIntervalMs: 0 }),
    events: (calls) => [
      ...calls.flatMap((call, index) => [
        {
          id: 'chatcmpl-F',
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index, id: call.id, function: { name: call.name, arguments: '' } }] },
            },
          ],
        },
        ...call.pieces.map((piece) => ({
          choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: piece } }] } }],
        })),
      ]),
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    ],
  },
  {
    name: 'OpenAI Responses',
    read: (gate) => readOpenAIResponsesStream(gate, { previewIntervalMs: 0 }),
    events: (calls) => [
      ...calls.flatMap((call, index) => [
        {
          type: 'response.output_item.added',
          output_index: index,
          item: {
            type: 'function_call',
            id: `fc_${index}`,
            call_id: call.id,
            name: call.name,
            arguments: '',
          },
        },
        ...call.pieces.map((delta) => ({
          type: 'response.function_call_arguments.delta',
          item_id: `fc_${index}`,
          output_index: index,
          delta,
        })),
        {
          type: 'response.function_call_arguments.done',
          item_id: `fc_${index}`,
          output_index: index,
          arguments: call.text,
        },
      ]),
      { type: 'response.completed', response: { id: 'resp_F' } },
    ],
  },
  {
    name: 'Anthropic',
    read: (gate) => readAnthropicStream(gate, { previewIntervalMs: 0 }),
    events: (calls) => [
      ...calls.flatMap((call, index) => [
        {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
        },
        ...call.pieces.map((partial_json) => ({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json },
        })),
        { type: 'content_block_stop', index },
      ]),
      { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
    ],
  },
  {
    name: 'AI SDK',
    read: (gate) => readAiSdkStream(gate, { previewIntervalMs: 0 }),
    events: (calls) => [
      ...calls.flatMap((call) => [
        { type: 'tool-input-start', id: call.id, toolName: call.name },
        ...call.pieces.map((delta) => ({ type: 'tool-input-delta', id: call.id, delta })),
        { type: 'tool-input-end', id: call.id },
      ]),
      { type: 'finish-step', finishReason: 'tool-calls' },
    ],
  },
  {
    name: 'Gemini',
    read: (gate) => readGeminiStream(gate, { previewIntervalMs: 0 }),
    events: (calls) => [
      ...calls.map((call) => {
        let args: unknown;
        try {
          args = JSON.parse(call.text);
        } catch {
          args = call.text;
        }
        return {
          candidates: [{ content: { parts: [{ functionCall: { id: call.id, name: call.name, args } }] } }],
        };
      }),
      { candidates: [{ finishReason: 'STOP' }] },
    ],
  },
];

const limits = { maxArgumentChars: 300, maxDepth: 5 };
const NAMES = ['record', 'record', 'nope', '', '__proto__', 'constructor', 'multi_tool_use.parallel'];
const IDS = ['call_a', 'call_b', '__proto__', 'constructor', 'toString', ''];

/** Cuts text into the pieces a provider streams it in. */
const split = (text: string) =>
  fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 30 }).map((sizes) => {
    const pieces: string[] = [];
    let at = 0;
    for (const size of sizes) {
      if (at >= text.length) break;
      pieces.push(text.slice(at, (at += size)));
    }
    if (at < text.length) pieces.push(text.slice(at));
    return pieces;
  });

const callOf = (text: fc.Arbitrary<string>) =>
  fc
    .record({ id: fc.constantFrom(...IDS), name: fc.constantFrom(...NAMES), text })
    .chain((call) => split(call.text).map((pieces): Call => ({ ...call, pieces })));

/** Arguments as JSON.stringify writes them: any prefix previews within the limit plus its closing brackets. */
const canonical = fc.jsonValue({ maxDepth: 8 }).map((value) => JSON.stringify(value));
const hostile = fc.oneof(
  canonical,
  fc.string(),
  fc.integer({ min: 1, max: 400 }).map((n) => '['.repeat(n)),
  fc.integer({ min: 1, max: 400 }).map((n) => `{"a":"${'x'.repeat(n)}`),
  fc.constantFrom(
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"a":1}{"b":2}',
    '{"a":1e400}',
    '"\\ud800"',
  ),
);

function run(reader: (typeof READERS)[number], calls: readonly Call[], junk: readonly [number, unknown][]) {
  const gate = createToolGate({ tools: [anything], store: createWorkspace(), limits });
  const previews: unknown[] = [];
  gate.calls.subscribe((state) => {
    for (const call of state.records.values())
      if (call.status === 'pending' && call.preview !== undefined) previews.push(call.preview);
  });
  const events = reader.events(calls);
  for (const [at, event] of junk) events.splice(at % (events.length + 1), 0, event);
  const turn = reader.read(gate);
  for (const event of events) turn.push(event as never);
  turn.end();
  return { gate, previews, records: turn.calls() };
}

describe('every reader, whatever a model or a proxy streams', () => {
  for (const reader of READERS) {
    it(`${reader.name}: push never throws, previews stay within the limits, and every call settles`, () => {
      fc.assert(
        fc.property(
          fc.array(callOf(hostile), { maxLength: 3 }),
          fc.array(fc.tuple(fc.nat(), fc.anything()), { maxLength: 4 }),
          (calls, junk) => {
            const { previews, records } = run(reader, calls, junk);
            for (const preview of previews) expect(depthOf(preview)).toBeLessThanOrEqual(limits.maxDepth);
            for (const record of records) expect(isTerminal(record.status)).toBe(true);
            expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
          },
        ),
        { numRuns: 150 },
      );
    });

    it(`${reader.name}: a preview of well-formed arguments is never longer than the limit plus its closing brackets`, () => {
      fc.assert(
        fc.property(fc.array(callOf(canonical), { maxLength: 3 }), (calls) => {
          for (const preview of run(reader, calls, []).previews) {
            expect(JSON.stringify(preview).length).toBeLessThanOrEqual(
              limits.maxArgumentChars + limits.maxDepth,
            );
          }
        }),
        { numRuns: 100 },
      );
    });
  }
});

describe('gate.stream.refuse', () => {
  it("rejects a streamed call with the reader's reason, once, and runs nothing", () => {
    let ran = 0;
    const tool = defineTool({ name: 'fill', inputSchema: { type: 'object' }, execute: () => ++ran });
    const gate = createToolGate({ tools: [tool] });
    const call = gate.stream.open({ id: 'v1', name: 'fill', source: 'gemini' });
    expect(call.status).toBe('pending');
    const refused = gate.stream.refuse('v1', {
      code: 'invalid_shape',
      message: 'partialArgs path $.items[-1] names no place in a JSON value',
    });
    expect(refused).toMatchObject({
      status: 'rejected',
      reason: {
        code: 'invalid_shape',
        message: 'partialArgs path $.items[-1] names no place in a JSON value',
      },
    });
    expect(gate.stream.close('v1', '{}')?.status).toBe('rejected');
    expect(gate.stream.refuse('v1', { code: 'too_large', message: 'again' })?.reason?.message).toBe(
      'partialArgs path $.items[-1] names no place in a JSON value',
    );
    expect(ran).toBe(0);
  });

  it('keeps only a stream refusal code, and only text', () => {
    const gate = createToolGate({
      tools: [defineTool({ name: 'fill', inputSchema: { type: 'object' }, execute: () => 1 })],
    });
    gate.stream.open({ id: 'v2', name: 'fill', source: 'gemini' });
    const refused = gate.stream.refuse('v2', { code: 'unauthorized', message: { said: 42 } } as never);
    expect(refused?.reason).toEqual({ code: 'invalid_shape', message: '{"said":42}' });
  });
});
