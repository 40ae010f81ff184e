import { describe, expect, it } from 'vitest';
import { createToolGate, openaiChatReply, readAnthropicStream, readOpenAIChatStream, type OpenAIChatChunk } from '../src/index.ts';
import { createFakeClock } from './support/clock.ts';
import { createWorkspace, getTime, writeFile } from './providers/support/tools.ts';

const delta = (index: number, fields: { id?: string; name?: string; args?: string }): OpenAIChatChunk => ({
  id: 'chatcmpl-S',
  choices: [
    {
      index: 0,
      delta: { tool_calls: [{ index, ...(fields.id === undefined ? {} : { id: fields.id }), function: { ...(fields.name === undefined ? {} : { name: fields.name }), ...(fields.args === undefined ? {} : { arguments: fields.args }) } }] },
      finish_reason: null,
    },
  ],
});
const finish = (reason: string): OpenAIChatChunk => ({ id: 'chatcmpl-S', choices: [{ index: 0, delta: {}, finish_reason: reason }] });

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
    const gate = createToolGate({ tools: [writeFile()], store: createWorkspace(), limits: { maxArgumentChars: 1_000 } });
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
    expect(openaiChatReply(await reader.settled()).map((m) => m.role === 'tool' && m.tool_call_id)).toEqual(['call_A']);
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
    reader.push({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_A', name: 'get_time', input: {} } });
    reader.push({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"timezone":"UTC"}' } });
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
