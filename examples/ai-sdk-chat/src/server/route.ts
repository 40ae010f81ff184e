import { toolgateChat } from '@toolgate/ai-sdk';
import { convertToModelMessages, stepCountIs, streamText, type InferUITools, type UIMessage } from 'ai';
import type { ToolgateDataTypes, ToolgateToolSet } from '@toolgate/ai-sdk';
import { model } from './model.ts';
import { serverGate, userOf } from './toolgate.ts';

export async function POST(req: Request) {
  const { id, messages } = (await req.json()) as { id: string; messages: ChatMessage[] };
  const chat = toolgateChat(serverGate, { session: id, principal: userOf(req) });

  const result = streamText({
    model,
    messages: await convertToModelMessages(await chat.messages(messages)),
    tools: chat.tools,
    stopWhen: stepCountIs(5),
  });

  return chat.toUIMessageStreamResponse(result);
}

/** The chat's messages, as the page types them: each tool part typed from the tool, and toolgate's data parts. */
export type ChatMessage = UIMessage<unknown, ToolgateDataTypes, InferUITools<ToolgateToolSet<typeof serverGate.tools>>>;
