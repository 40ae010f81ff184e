import { toolgateChat, type ToolgateUIMessage } from '@toolgate/ai-sdk';
import { convertToModelMessages, stepCountIs, streamText } from 'ai';
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

export type ChatMessage = ToolgateUIMessage<typeof serverGate>;
