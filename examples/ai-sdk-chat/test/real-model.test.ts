import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

// The example on a real OpenAI-compatible endpoint: a loopback server that speaks the Chat
// Completions stream, so the test needs no network and no key of anyone's.
const KEY = 'sk-loopback-test-key';
const seen: {
  authorization: string | undefined;
  body: { tools?: { function: { name: string } }[]; messages: { role: string }[] };
}[] = [];
const directory = mkdtempSync(join(tmpdir(), 'toolgate-ai-sdk-chat-'));
let endpoint: ReturnType<typeof createServer>;
let app: { fetch: (request: Request) => Response | Promise<Response>; close: () => Promise<void> };

const sse = (chunks: unknown[]) =>
  chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('') + 'data: [DONE]\n\n';
const chunk = (delta: unknown, finish: string | null = null) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'loopback',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

async function read(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const part of request) text += String(part);
  return text;
}

beforeAll(async () => {
  endpoint = createServer((request, response) => {
    void read(request).then((text) => {
      const body = JSON.parse(text) as (typeof seen)[number]['body'];
      seen.push({ authorization: request.headers.authorization, body });
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const answered = body.messages.some((message) => message.role === 'tool');
      response.end(
        answered
          ? sse([chunk({ role: 'assistant', content: 'Paid Bob $50.' }), chunk({}, 'stop')])
          : sse([
              chunk({
                role: 'assistant',
                tool_calls: [
                  {
                    index: 0,
                    id: 'call_real_1',
                    type: 'function',
                    function: { name: 'processPayment', arguments: '' },
                  },
                ],
              }),
              chunk({
                tool_calls: [{ index: 0, function: { arguments: '{"amount":50,"recipient":"Bob"}' } }],
              }),
              chunk({}, 'tool_calls'),
            ]),
      );
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  process.env['OPENAI_API_KEY'] = KEY;
  process.env['OPENAI_BASE_URL'] = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1`;
  process.env['OPENAI_MODEL'] = 'loopback-model';
  process.env['AI_SDK_CHAT_LEDGER'] = join(directory, 'ledger.db');
  const { createApp } = await import('../src/server/app.ts');
  app = createApp();
});

afterAll(async () => {
  await app.close();
  await new Promise((resolve) => endpoint.close(resolve));
  rmSync(directory, { recursive: true, force: true });
});

it("calls the endpoint from the server with the gate's tools, runs the call through the ledger once, and never shows the key", async () => {
  const response = await app.fetch(
    new Request('http://127.0.0.1/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'uid=user-0123456789abcdef' },
      body: JSON.stringify({
        id: 'chat_real',
        trigger: 'submit-message',
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Pay Bob $50' }] }],
      }),
    }),
  );
  const stream = await response.text();
  expect(response.status).toBe(200);
  expect(stream).toContain(
    '"type":"tool-output-available","toolCallId":"call_real_1","output":"Payment of $50 to Bob processed."',
  );
  expect(stream).toContain('"status":"committed"');
  expect(stream).toContain('Paid Bob $50.');
  expect(stream).not.toContain(KEY);
  expect(seen.map((request) => request.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
  expect(seen[0]?.body.tools?.map((tool) => tool.function.name)).toEqual([
    'getWeatherInformation',
    'processPayment',
  ]);
});

it('answers 401 to a request without a signed-in user, and calls no model', async () => {
  const before = seen.length;
  const response = await app.fetch(
    new Request('http://127.0.0.1/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }),
  );
  expect(response.status).toBe(401);
  expect(seen).toHaveLength(before);
});
