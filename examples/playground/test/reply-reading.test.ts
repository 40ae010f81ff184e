import { createToolGate, defineTool } from '@toolgate/core';
import { describe, expect, it } from 'vitest';
import { scriptedTurn } from '../src/model/scripted-model.ts';

const transfer = defineTool({
  name: 'transfer_funds',
  inputSchema: {
    type: 'object',
    properties: { to: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1, maximum: 50_000 } },
    required: ['to', 'amount_cents'],
  },
  authorize: ({ amount_cents }) => amount_cents <= 10_000 || 'the wallet holds only $100.00',
  execute: ({ to, amount_cents }) => ({ transfer_id: 'tr_501', to, amount_cents }),
});

/** The scripted model's answer after its transfer call ended as `record` says. */
function answerAfter(content: string): string {
  const first = scriptedTurn([{ role: 'user', content: 'send 20 dollars to alice@example.com' }]);
  const call = first.calls?.[0];
  if (call === undefined) throw new Error('no call');
  const turn = scriptedTurn([
    { role: 'user', content: 'send 20 dollars to alice@example.com' },
    {
      role: 'assistant',
      content: first.content ?? '',
      tool_calls: [
        { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } },
      ],
    },
    { role: 'tool', tool_call_id: call.id, content },
  ]);
  return turn.content ?? '';
}

async function settle(args: string): Promise<string> {
  const gate = createToolGate({ tools: [transfer] });
  const record = await gate.run({ name: 'transfer_funds', arguments: args });
  return gate.toolResult(record.id, 'openai-chat').content;
}

describe("the scripted model's answer after a refusal", () => {
  it('names each refused value and what it had to be, without the "Error:" heading', async () => {
    const content = await settle('{"to":"alice@example.com","amount_cents":-2000}');
    const answer = answerAfter(content);
    expect(answer).toBe(
      'The transfer did not go through: amount_cents must be >= 1 (got integer -2000). Nothing was run.',
    );
  });

  it("names the app's own reason", async () => {
    const content = await settle('{"to":"alice@example.com","amount_cents":20000}');
    expect(answerAfter(content)).toBe(
      'The transfer did not go through: the wallet holds only $100.00. Nothing was run.',
    );
  });

  it('says once that it cannot tell whether an interrupted transfer went through', () => {
    const content =
      'Error: the call to "transfer_funds" failed (interrupted): the server stopped while the tool ran; it may or may not have taken effect. Check before calling "transfer_funds" again.';
    const answer = answerAfter(content);
    expect(answer).not.toContain('Error:');
    // "I can't tell whether it went through" is the one telling; "may or may not" would say it again.
    expect(answer).not.toMatch(/may or may not/i);
    expect(answer).toBe(
      "I can't tell whether the transfer went through: the server stopped while the tool ran. Check the wallet before you try again.",
    );
  });
});
