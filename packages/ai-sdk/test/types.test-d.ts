import { defineTool } from '@toolgate/core';
import type { ServerGate } from '@toolgate/server';
import type { InferUITools, ToolSet, UIMessage } from 'ai';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  toolgateChat,
  type ToolgateChat,
  type ToolgateDataTypes,
  type ToolgateUIMessage,
} from '../src/index.ts';
import type { createTools } from './support/tools.ts';

const lookUp = defineTool({
  name: 'look_up',
  inputSchema: z.object({ q: z.string(), limit: z.number().int().optional() }),
  execute: ({ q }) => ({ hits: [q] }),
});

describe('chat.tools is typed from the gate', () => {
  it('gives InferUITools each tool by name, with the input its schema declares and the output its execute returns', () => {
    const gate = null as unknown as ServerGate<readonly [...ReturnType<typeof createTools>, typeof lookUp]>;
    const chat = toolgateChat(gate, { session: 's', principal: 'p' });
    expectTypeOf(chat.tools).toExtend<ToolSet>();
    type Tools = InferUITools<typeof chat.tools>;
    expectTypeOf<keyof Tools>().toEqualTypeOf<'transfer' | 'get_balance' | 'look_up'>();
    expectTypeOf<Tools['transfer']['input']>().toEqualTypeOf<{ to: string; amount_cents: number }>();
    expectTypeOf<Tools['transfer']['output']>().toEqualTypeOf<{
      sent_cents: number;
      to: string;
      receipt: string;
    }>();
    expectTypeOf<Tools['look_up']['input']>().toEqualTypeOf<{ q: string; limit?: number | undefined }>();
    expectTypeOf<Tools['look_up']['output']>().toEqualTypeOf<{ hits: string[] }>();
  });

  it('types the data-toolgate parts of a chat message', () => {
    type Message = UIMessage<unknown, ToolgateDataTypes>;
    const part = null as unknown as Extract<Message['parts'][number], { type: 'data-toolgate' }>;
    expectTypeOf(part.data.record.status).toEqualTypeOf<
      | 'pending'
      | 'validated'
      | 'awaiting_approval'
      | 'executing'
      | 'committed'
      | 'cancelled'
      | 'rejected'
      | 'failed'
    >();
  });
});

describe('ToolgateUIMessage', () => {
  it("types a chat message's tool parts from the gate's tools, as InferUITools does", () => {
    type Gate = ServerGate<readonly [...ReturnType<typeof createTools>, typeof lookUp]>;
    type Message = ToolgateUIMessage<Gate>;
    type Chat = ToolgateChat<Gate['tools']>;
    expectTypeOf<Message>().toEqualTypeOf<
      UIMessage<unknown, ToolgateDataTypes, InferUITools<Chat['tools']>>
    >();
    const part = null as unknown as Extract<
      Message['parts'][number],
      { type: 'tool-transfer'; state: 'output-available' }
    >;
    expectTypeOf(part.output.receipt).toEqualTypeOf<string>();
  });
});
