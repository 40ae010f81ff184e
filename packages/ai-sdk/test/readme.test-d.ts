// The README's snippets as written (the gate and a tool, the route, the page's message type and
// useChat's options): if one stops compiling, the README is wrong.
import { defineTool } from '@toolgate/core';
import { createServerGate, sqliteLedger } from '@toolgate/server';
import {
  convertToModelMessages,
  DefaultChatTransport,
  stepCountIs,
  streamText,
  type ChatAddToolApproveResponseFunction,
  type ChatInit,
  type LanguageModel,
} from 'ai';
import { createElement, type ReactElement } from 'react';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { toolgateChat, type ToolgateUIMessage } from '../src/index.ts';
import {
  ToolCallStatus,
  toolgateSendAutomaticallyWhen,
  type ChatToolCallStatusProps,
} from '../src/react/index.ts';

// toolgate.ts
export const processPayment = defineTool({
  name: 'processPayment',
  description: 'Process a payment',
  inputSchema: z.object({ amount: z.number(), recipient: z.string() }),
  needsApproval: ({ amount }) => amount > 1000, // waits for the person above $1000
  execute: async ({ amount, recipient }) => `Payment of $${amount} to ${recipient} processed.`,
});

export const serverGate = createServerGate({
  tools: [processPayment],
  ledger: await sqliteLedger({ path: 'toolgate.db' }),
});

// The route.
declare const model: LanguageModel;
declare function userIdOf(request: Request): Promise<string>;

export async function POST(request: Request) {
  const { id, messages } = await request.json();
  const chat = toolgateChat(serverGate, { session: id, principal: await userIdOf(request) });
  const result = streamText({
    model,
    tools: chat.tools,
    messages: await convertToModelMessages(await chat.messages(messages)),
    stopWhen: stepCountIs(5),
  });
  return chat.toUIMessageStreamResponse(result);
}

// The page's message type.
export type ChatMessage = ToolgateUIMessage<typeof serverGate>; // useChat<ChatMessage>()

describe("the README's snippets", () => {
  it("type the page's tool parts from the gate's tools, and its data-toolgate parts", () => {
    type Part = ChatMessage['parts'][number];
    type Payment = Extract<Part, { type: 'tool-processPayment'; state: 'output-available' }>;
    expectTypeOf<Payment['input']>().toEqualTypeOf<{ amount: number; recipient: string }>();
    expectTypeOf<Payment['output']>().toEqualTypeOf<string>();
    const data = null as unknown as Extract<Part, { type: 'data-toolgate' }>;
    expectTypeOf(data.data.record.status).toBeString();
    expectTypeOf(POST).returns.resolves.toEqualTypeOf<Response>();
  });

  it('give useChat its options and <ToolCallStatus> a part of that message', () => {
    const init = {
      transport: new DefaultChatTransport({ api: '/api/chat' }),
      sendAutomaticallyWhen: toolgateSendAutomaticallyWhen,
    } satisfies ChatInit<ChatMessage>;
    expectTypeOf(init).toExtend<ChatInit<ChatMessage>>();
    // <ToolCallStatus part={part} chat={{ messages, addToolApprovalResponse }} />, as useChat gives them.
    const part = null as unknown as Extract<ChatMessage['parts'][number], { type: 'tool-processPayment' }>;
    const chat = null as unknown as {
      messages: ChatMessage[];
      addToolApprovalResponse: ChatAddToolApproveResponseFunction;
    };
    expectTypeOf({ part, chat }).toExtend<ChatToolCallStatusProps>();
    expectTypeOf(createElement(ToolCallStatus, { part, chat })).toExtend<ReactElement>();
  });
});
