import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { aiSdkReply } from '../../src/ai-sdk.ts';
import { anthropicReply } from '../../src/anthropic.ts';
import { createToolGate, type SettledCall } from '../../src/index.ts';
import { geminiReply } from '../../src/gemini.ts';
import { mcpToolResult } from '../../src/mcp.ts';
import { openaiChatReply, openaiResponsesReply } from '../../src/openai.ts';
import { createWorkspace, getTime, getWeather } from '@toolgate/test-utils';

/**
 * The reply shapes of the two SDKs not installed here, as their type definitions declare them
 * (googleapis/js-genai `Content`/`Part`/`FunctionResponse`; vercel/ai `ToolModelMessage`/`ToolResultPart`).
 */
interface GenAiContent {
  role?: string;
  parts?: {
    text?: string;
    functionResponse?: { id?: string; name?: string; response?: Record<string, unknown> };
  }[];
}
type AiSdkModelMessage =
  | { role: 'user'; content: string }
  | {
      role: 'tool';
      content: {
        type: 'tool-result';
        toolCallId: string;
        toolName: string;
        output:
          | { type: 'text' | 'error-text'; value: string }
          | { type: 'json'; value: unknown }
          | { type: 'execution-denied'; reason?: string };
      }[];
    };

/** One committed, one rejected and one cancelled call of the same assistant turn. */
async function mixedTurn(): Promise<SettledCall[]> {
  const slow = { ...getTime(), execute: () => new Promise<string>(() => undefined) };
  const gate = createToolGate({ tools: [getWeather(), slow], store: createWorkspace() });
  gate.propose({ id: 'call_ok', name: 'get_weather', arguments: '{"location":"Oslo"}' }, { turn: 't1' });
  gate.propose({ id: 'call_bad', name: 'get_weather', arguments: '{"location":7}' }, { turn: 't1' });
  gate.propose({ id: 'call_stop', name: 'get_time', arguments: '{"timezone":"UTC"}' }, { turn: 't1' });
  gate.cancel('call_stop');
  return Promise.all(['call_ok', 'call_bad', 'call_stop'].map((id) => gate.settled(id)));
}

const ids = ['call_ok', 'call_bad', 'call_stop'];

describe('the reply to a mixed turn, per provider', () => {
  it('OpenAI Chat: one tool message per call id, typed as the SDK message params', async () => {
    const reply: ChatCompletionMessageParam[] = openaiChatReply(await mixedTurn());
    expect(reply.map((m) => (m.role === 'tool' ? m.tool_call_id : m.role))).toEqual(ids);
  });

  it('OpenAI Responses: one function_call_output per call_id, typed as SDK input items', async () => {
    const reply: ResponseInputItem[] = openaiResponsesReply(await mixedTurn());
    expect(reply.map((item) => ('call_id' in item ? item.call_id : undefined))).toEqual(ids);
  });

  it('Anthropic: one user message with every tool_result first, failures flagged, typed as the SDK message param', async () => {
    const reply: MessageParam = anthropicReply(await mixedTurn(), { notice: 'Stop.' });
    const blocks = reply.content as { type: string; tool_use_id?: string; is_error?: boolean }[];
    expect(blocks.map((b) => b.tool_use_id ?? b.type)).toEqual([...ids, 'text']);
    expect(blocks.map((b) => b.is_error === true)).toEqual([false, true, true, false]);
  });

  it('Gemini: one functionResponse part per call, { output } or { error }', async () => {
    const reply: GenAiContent = geminiReply(await mixedTurn());
    expect(reply.parts?.map((p) => p.functionResponse?.id)).toEqual(ids);
    expect(reply.parts?.map((p) => Object.keys(p.functionResponse?.response ?? {}))).toEqual([
      ['output'],
      ['error'],
      ['error'],
    ]);
  });

  it('AI SDK: one tool-result part per call in one tool message', async () => {
    const reply: AiSdkModelMessage[] = aiSdkReply(await mixedTurn());
    const [tool] = reply;
    expect(tool?.role === 'tool' && tool.content.map((p) => [p.toolCallId, p.output.type])).toEqual([
      ['call_ok', 'json'],
      ['call_bad', 'error-text'],
      ['call_stop', 'error-text'],
    ]);
  });

  it("MCP: each call's CallToolResult passes the SDK's own schema", async () => {
    const results = (await mixedTurn()).map((call) => CallToolResultSchema.parse(mcpToolResult(call)));
    expect(results.map((r) => r.isError === true)).toEqual([false, true, true]);
  });

  it('answers each id once even when a call is listed twice, and refuses a turn that has not settled', async () => {
    const calls = await mixedTurn();
    expect(openaiChatReply([...calls, calls[0] as SettledCall])).toHaveLength(3);
    const gate = createToolGate({
      tools: [{ ...getTime(), execute: () => new Promise<string>(() => undefined) }],
    });
    const running = gate.propose({ id: 'r1', name: 'get_time', arguments: '{"timezone":"UTC"}' });
    expect(() => openaiChatReply([running as SettledCall])).toThrow(
      'openaiChatReply: call "r1" is executing; answer a turn once every call has settled',
    );
  });
});
