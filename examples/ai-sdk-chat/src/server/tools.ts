import { appendFileSync } from 'node:fs';
import { defineTool } from '@toolgate/core';
import { z } from 'zod';

// The AI SDK's human-in-the-loop tools, as toolgate tools: the same fields, in `defineTool`.

export const getWeatherInformation = defineTool({
  name: 'getWeatherInformation',
  description: 'show the weather in a given city to the user',
  inputSchema: z.object({ city: z.string() }),
  needsApproval: true,
  execute: async ({ city }) => {
    const weatherOptions = ['sunny', 'cloudy', 'rainy', 'snowy'];
    ranFor('getWeatherInformation', { city });
    return weatherOptions[Math.floor(Math.random() * weatherOptions.length)];
  },
});

export const processPayment = defineTool({
  name: 'processPayment',
  description: 'Process a payment',
  inputSchema: z.object({ amount: z.number(), recipient: z.string() }),
  needsApproval: async ({ amount }) => amount > 1000,
  execute: async ({ amount, recipient }) => {
    ranFor('processPayment', { amount, recipient });
    return `Payment of $${amount} to ${recipient} processed.`;
  },
});

export const tools = [getWeatherInformation, processPayment] as const;

/** Each run of a tool, one JSON line in the file AI_SDK_CHAT_EFFECTS names (the end-to-end tests count them). */
function ranFor(tool: string, input: unknown): void {
  const file = process.env['AI_SDK_CHAT_EFFECTS'];
  if (file !== undefined && file !== '') appendFileSync(file, `${JSON.stringify({ tool, input })}\n`);
}
