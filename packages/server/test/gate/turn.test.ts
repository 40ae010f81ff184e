import { defineTool } from '@toolgate/core';
import { openaiChatReply, readOpenAIChatStream } from '@toolgate/core/openai';
import OpenAI from 'openai';
import { afterEach, expect, it } from 'vitest';
import { chatStream, type ReplayServer, startReplayServer } from '@toolgate/test-utils';
import { createServerGate } from '../../src/index.ts';
import { describeLedgers } from '../support/ledgers.ts';

const ran: string[] = [];
const transfer = defineTool({
  name: 'transfer',
  inputSchema: {
    type: 'object',
    properties: { to: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
    required: ['to', 'amount_cents'],
    additionalProperties: false,
  },
  execute: (input) => {
    ran.push(`${input.to}:${input.amount_cents}`);
    return { sent: input.amount_cents };
  },
});

let replay: ReplayServer | undefined;
afterEach(async () => {
  await replay?.close();
  replay = undefined;
  ran.length = 0;
});

describeLedgers('a model stream read into the server gate', (target) => {
  it('proposes each call as its arguments complete, and answers the model from the ledger', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = createServerGate({ tools: [transfer], ledger, recover: false });
    replay = await startReplayServer();
    replay.enqueue(
      chatStream([
        [{ index: 0, id: 'call_a', name: 'transfer', args: '{"to":"alice@example.com",' }],
        [{ index: 0, args: '"amount_cents":2000}' }],
        [
          {
            index: 1,
            id: 'call_b',
            name: 'transfer',
            args: '{"to":"bob@example.com","amount_cents":"12.50"}',
          },
        ],
      ]),
    );
    const client = new OpenAI({ apiKey: 'test', baseURL: replay.url, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'pay' }],
      stream: true,
    });
    const reader = readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice' }));
    for await (const chunk of stream) reader.push(chunk);
    reader.end();
    const turn = await reader.settled();
    expect(turn.answers.map((answer) => answer.calls[0]?.status)).toEqual(['committed', 'rejected']);
    expect(ran).toEqual(['alice@example.com:2000']);
    const reply = openaiChatReply(turn);
    expect(reply).toMatchObject([
      { role: 'tool', tool_call_id: 'call_a', content: '{"sent":2000}' },
      { role: 'tool', tool_call_id: 'call_b', content: expect.stringContaining('/amount_cents') },
    ]);
    const stored = await gate.calls('chat_1', 'alice');
    // Both calls are written as they reach the ledger: in either order.
    expect(stored.map((call) => [call.id, call.status, call.source]).sort()).toEqual([
      ['call_a', 'committed', 'openai-chat'],
      ['call_b', 'rejected', 'openai-chat'],
    ]);
    expect(await gate.verify()).toMatchObject({ ok: true });
    await gate.close();
  });

  it('refuses a call the stream cut off, and stores the refusal', async () => {
    const ledger = await (await target.fresh()).open();
    const gate = createServerGate({ tools: [transfer], ledger, recover: false });
    replay = await startReplayServer();
    replay.enqueue(
      chatStream(
        [[{ index: 0, id: 'call_c', name: 'transfer', args: '{"to":"alice@example.com","amount_cents":20' }]],
        'length',
      ),
    );
    const client = new OpenAI({ apiKey: 'test', baseURL: replay.url, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'pay' }],
      stream: true,
    });
    const reader = readOpenAIChatStream(gate.turn({ session: 'chat_1', principal: 'alice' }));
    for await (const chunk of stream) reader.push(chunk);
    reader.end();
    const turn = await reader.settled();
    expect(turn.answers[0]?.calls[0]).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    expect(ran).toEqual([]);
    expect(await gate.get('call_c')).toMatchObject({ status: 'rejected', reason: { code: 'truncated' } });
    await gate.close();
  });
});
