import { describe, expect, it } from 'vitest';
import { cancel, createToolGate, defineTool, type SettledCall } from '../src/index.ts';
import { outcomeText } from '../src/kit.ts';
import { chargeTool, createShop } from '@toolgate/test-utils';

async function mixedTurn() {
  const gate = createToolGate({
    tools: [
      chargeTool(),
      defineTool({
        name: 'refund',
        inputSchema: { type: 'object' },
        needsApproval: true,
        execute: () => 'refunded',
      }),
      defineTool({ name: 'note', inputSchema: { type: 'object' }, execute: () => 'a plain string' }),
      defineTool({
        name: 'explode',
        inputSchema: { type: 'object' },
        execute: () => Promise.reject(new Error('disk full')),
      }),
      defineTool({
        name: 'hold',
        inputSchema: { type: 'object' },
        execute: () => cancel('stock is reserved for another order'),
      }),
    ],
    store: createShop(),
  });
  await gate.run({ id: 'ok', name: 'charge', arguments: '{"amount_cents":1250,"currency":"USD"}' });
  await gate.run({ id: 'bad', name: 'charge', arguments: '{"amount_cents":"12.50","currency":"GBP"}' });
  gate.propose({ id: 'denied', name: 'refund', arguments: '{}' });
  gate.deny('denied', 'the user said no');
  await gate.run({ id: 'str', name: 'note', arguments: '{}' });
  await gate.run({ id: 'boom', name: 'explode', arguments: '{}' });
  await gate.run({ id: 'held', name: 'hold', arguments: '{}' });
  await gate.run({ id: 'ghost', name: 'transfer', arguments: '{}' });
  return gate;
}

const rejectedText =
  'Error: the call to "charge" was rejected (invalid_arguments). Nothing was run.\n' +
  '- /amount_cents: must be integer (got string "12.50")\n' +
  '- /currency: must be one of "USD", "EUR" (got string "GBP")\n' +
  'Correct these arguments and call "charge" again.';

describe('gate.toolResult', () => {
  it('openai-chat: one tool message, the error said in the text', async () => {
    const gate = await mixedTurn();
    expect(gate.toolResult('ok', 'openai-chat')).toEqual({
      role: 'tool',
      tool_call_id: 'ok',
      content: '{"amount_cents":1250,"currency":"USD"}',
    });
    expect(gate.toolResult('bad', 'openai-chat')).toEqual({
      role: 'tool',
      tool_call_id: 'bad',
      content: rejectedText,
    });
  });

  it('openai-responses: a function_call_output keyed by call_id', async () => {
    const gate = await mixedTurn();
    expect(gate.toolResult('str', 'openai-responses')).toEqual({
      type: 'function_call_output',
      call_id: 'str',
      output: 'a plain string',
    });
    expect(gate.toolResult('denied', 'openai-responses').output).toBe(
      'The call to "refund" was cancelled (approval_denied): the user said no. Nothing was changed. Do not retry it unless the user asks.',
    );
  });

  it('anthropic: a tool_result block with is_error on every call that did not commit', async () => {
    const gate = await mixedTurn();
    expect(gate.toolResult('ok', 'anthropic')).toEqual({
      type: 'tool_result',
      tool_use_id: 'ok',
      content: '{"amount_cents":1250,"currency":"USD"}',
    });
    expect(gate.toolResult('bad', 'anthropic')).toEqual({
      type: 'tool_result',
      tool_use_id: 'bad',
      content: rejectedText,
      is_error: true,
    });
    expect(gate.toolResult('boom', 'anthropic')).toEqual({
      type: 'tool_result',
      tool_use_id: 'boom',
      content:
        'Error: the call to "explode" failed (tool_error): the tool failed: disk full. Nothing was changed.',
      is_error: true,
    });
  });

  it('gemini: functionResponse with output, or error; the id only when the model sent one', async () => {
    const gate = await mixedTurn();
    expect(gate.toolResult('ok', 'gemini')).toEqual({
      functionResponse: {
        name: 'charge',
        id: 'ok',
        response: { output: { amount_cents: 1250, currency: 'USD' } },
      },
    });
    expect(gate.toolResult('held', 'gemini')).toEqual({
      functionResponse: {
        name: 'hold',
        id: 'held',
        response: {
          error:
            'The call to "hold" was cancelled (tool_cancelled): stock is reserved for another order. Nothing was changed.',
        },
      },
    });
    const made = gate.propose({ functionCall: { name: 'note', args: {} } });
    expect(gate.toolResult(made.id, 'gemini')).toEqual({
      functionResponse: { name: 'note', response: { output: 'a plain string' } },
    });
  });

  it('mcp: a CallToolResult with isError, and structuredContent for object output', async () => {
    const gate = await mixedTurn();
    expect(gate.toolResult('ok', 'mcp')).toEqual({
      content: [{ type: 'text', text: '{"amount_cents":1250,"currency":"USD"}' }],
      structuredContent: { amount_cents: 1250, currency: 'USD' },
    });
    expect(gate.toolResult('ghost', 'mcp')).toEqual({
      content: [
        {
          type: 'text',
          text: 'Error: the call to "transfer" was rejected (unknown_tool). Nothing was run.\nno tool named "transfer" is registered; the tools are "charge", "refund", "note", "explode", "hold".\nCall one of the registered tools instead.',
        },
      ],
      isError: true,
    });
  });

  it('ai-sdk: a tool-result part, execution-denied for a denied call, error-text for the rest', async () => {
    const gate = await mixedTurn();
    expect(gate.toolResult('ok', 'ai-sdk')).toEqual({
      type: 'tool-result',
      toolCallId: 'ok',
      toolName: 'charge',
      output: { type: 'json', value: { amount_cents: 1250, currency: 'USD' } },
    });
    expect(gate.toolResult('str', 'ai-sdk').output).toEqual({ type: 'text', value: 'a plain string' });
    expect(gate.toolResult('denied', 'ai-sdk').output).toEqual({
      type: 'execution-denied',
      reason: 'the user said no',
    });
    expect(gate.toolResult('bad', 'ai-sdk').output).toEqual({ type: 'error-text', value: rejectedText });
  });

  it('says why for every rejection code', async () => {
    const gate = createToolGate({
      tools: [chargeTool()],
      store: createShop(),
      limits: { maxArgumentChars: 64, maxDepth: 3 },
    });
    const texts = [
      gate.propose({ name: 'charge', arguments: '{' }),
      gate.propose({ name: 'charge', arguments: '{"a":"' + 'x'.repeat(100) + '"}' }),
      gate.propose({ name: 'charge', arguments: '[[[[]]]]' }),
      gate.propose({
        type: 'function_call',
        call_id: 't',
        name: 'charge',
        arguments: '{"am',
        status: 'incomplete',
      }),
      gate.propose(17),
    ].map((call) => gate.toolResult(call.id, 'openai-chat').content);
    expect(texts[0]).toMatch(
      /^Error: the call to "charge" was rejected \(invalid_json\)\. Nothing was run\.\nthe arguments are not valid JSON: /,
    );
    expect(texts[1]).toMatch(
      /\(too_large\).*\nthe arguments are 108 characters; more than the limit of 64 characters\.\nSend smaller arguments\./s,
    );
    expect(texts[2]).toMatch(/\(too_deep\).*nest deeper than 3 levels/s);
    expect(texts[3]).toMatch(/\(truncated\).*cut this call off.*call "charge" again with shorter arguments/s);
    expect(texts[4]).toMatch(/\(invalid_shape\).*got number/s);
  });

  it('refuses to answer a call that has not settled, saying what to do', () => {
    const gate = createToolGate({
      tools: [
        defineTool({ name: 'slow', inputSchema: { type: 'object' }, execute: () => new Promise(() => {}) }),
      ],
    });
    gate.propose({ id: 's', name: 'slow', arguments: '{}' });
    expect(() => gate.toolResult('s', 'openai-chat')).toThrow(/is executing; answer it once it has settled/);
    expect(() => gate.toolResult('nope', 'openai-chat')).toThrow(/no call with id "nope"/);
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'OpenAI-Chat', 42])(
    'throws a clear error for the unknown format %s',
    async (format) => {
      const gate = await mixedTurn();
      expect(() => gate.toolResult('ok', format as 'openai-chat')).toThrow(
        /unknown format .*; use one of openai-chat, openai-responses, anthropic, gemini, mcp, ai-sdk/,
      );
    },
  );

  const formats = ['openai-chat', 'openai-responses', 'anthropic', 'gemini', 'mcp', 'ai-sdk'] as const;

  it.each(formats)(
    '%s: answers a committed call whose output cannot be sent as JSON, saying so',
    async (format) => {
      const cyclic: Record<string, unknown> = { id: 1 };
      cyclic['self'] = cyclic;
      const gate = createToolGate({
        tools: [
          defineTool({
            name: 'big',
            inputSchema: { type: 'object' },
            execute: () => ({ total: 10n ** 20n }),
          }),
          defineTool({ name: 'loop', inputSchema: { type: 'object' }, execute: () => cyclic }),
          defineTool({ name: 'raw', inputSchema: { type: 'object' }, execute: () => 7n }),
        ],
      });
      for (const name of ['big', 'loop', 'raw']) {
        const call = await gate.run({ id: name, name, arguments: '{}' });
        expect(call.status).toBe('committed');
        const answer = gate.toolResult(name, format);
        // What the app sends the provider must serialise, and the model must hear what happened.
        const sent = JSON.stringify(answer);
        expect(sent).toMatch(/The tool finished, but its output cannot be sent as JSON/);
      }
    },
  );
});

describe('outcomeText for an interrupted call', () => {
  const interrupted = (message: string): SettledCall =>
    ({
      id: 'call_1',
      name: 'transfer',
      status: 'failed',
      reason: { code: 'interrupted', message },
      history: ['pending', 'validated', 'executing', 'failed'],
    }) as unknown as SettledCall;

  it('tells the model once that it may or may not have taken effect, when the reason already says so', () => {
    const text = outcomeText(
      interrupted('the server stopped while the tool ran; it may or may not have taken effect'),
    );
    expect(text.match(/may or may not/gi)).toHaveLength(1);
    expect(text).toBe(
      'Error: the call to "transfer" failed (interrupted): the server stopped while the tool ran; it may or may not have taken effect. Check before calling "transfer" again.',
    );
  });

  it('says it when the reason does not', () => {
    const text = outcomeText(interrupted('the upstream closed its connection'));
    expect(text).toBe(
      'Error: the call to "transfer" failed (interrupted): the upstream closed its connection. It may or may not have taken effect. Check before calling "transfer" again.',
    );
  });
});
