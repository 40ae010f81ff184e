import type { Tool as AnthropicSdkTool } from '@anthropic-ai/sdk/resources/messages';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool } from 'openai/resources/responses/responses';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  anthropicTools,
  defineTool,
  geminiFunctionDeclarations,
  mcpToolList,
  openaiChatTools,
  openaiResponsesTools,
  openaiStrictSchema,
} from '../../src/index.ts';
import { getWeather, searchDocs } from './support/tools.ts';

const strictable = defineTool({
  name: 'get_forecast',
  description: 'Daily forecast.',
  inputSchema: {
    type: 'object',
    properties: {
      location: { type: 'string' },
      unit: { type: ['string', 'null'], enum: ['celsius', 'fahrenheit', null] },
      days: { type: 'array', items: { type: 'object', properties: { date: { type: 'string', format: 'date' } }, required: ['date'] } },
    },
    required: ['location', 'unit', 'days'],
  },
  execute: () => 'ok',
});

describe('tool definitions out', () => {
  it('exports OpenAI Chat tools, strict when the schema allows it (adding additionalProperties: false)', () => {
    const tools: ChatCompletionTool[] = openaiChatTools([strictable, getWeather()]);
    expect(tools[0]).toEqual({
      type: 'function',
      function: {
        name: 'get_forecast',
        description: 'Daily forecast.',
        strict: true,
        parameters: {
          type: 'object',
          properties: {
            location: { type: 'string' },
            unit: { type: ['string', 'null'], enum: ['celsius', 'fahrenheit', null] },
            days: {
              type: 'array',
              items: { type: 'object', properties: { date: { type: 'string', format: 'date' } }, required: ['date'], additionalProperties: false },
            },
          },
          required: ['location', 'unit', 'days'],
          additionalProperties: false,
        },
      },
    });
    // get_weather has an optional `unit`: strict mode would make the model send null, which its schema refuses.
    expect(tools[1]).toMatchObject({ function: { name: 'get_weather', strict: false } });
  });

  it('says exactly why a schema cannot be made strict when strict is required', () => {
    expect(() => openaiChatTools([searchDocs()], { strict: true })).toThrow(
      'openaiChatTools: tool "search_docs" cannot be made strict:\n' +
        '- /properties/limit is optional: strict mode needs every property in "required" (make it required with a "null" type, or export with strict: false)\n' +
        '- /properties/include_archived is optional',
    );
    expect(openaiStrictSchema({ type: 'object', properties: { a: { allOf: [{ type: 'string' }] } }, required: ['a'], additionalProperties: true })).toEqual({
      ok: false,
      problems: ['/properties/a uses "allOf", which strict mode does not support', '(root) allows additional properties; strict mode needs "additionalProperties": false'],
    });
    expect(openaiStrictSchema({ type: 'object', properties: { meta: { type: 'object' } }, required: ['meta'] })).toMatchObject({
      ok: false,
      problems: ['/properties/meta is an object with no "properties"; strict mode cannot describe a free-form object'],
    });
  });

  it('exports flat Responses function tools', () => {
    const tools: FunctionTool[] = openaiResponsesTools([strictable], { strict: false });
    expect(tools[0]).toMatchObject({ type: 'function', name: 'get_forecast', strict: false, parameters: { required: ['location', 'unit', 'days'] } });
    expect(tools[0]?.parameters).not.toHaveProperty('additionalProperties');
  });

  it('exports Anthropic tools and Gemini function declarations', () => {
    const anthropic: AnthropicSdkTool[] = anthropicTools([getWeather()]);
    expect(anthropic[0]).toMatchObject({ name: 'get_weather', description: 'Current weather for a city.', input_schema: { type: 'object', required: ['location'] } });
    expect(geminiFunctionDeclarations([getWeather()])[0]).toMatchObject({ name: 'get_weather', parametersJsonSchema: { type: 'object' } });
  });

  it('exports MCP tools/list entries that pass the SDK schema', () => {
    const tools = ListToolsResultSchema.parse({ tools: mcpToolList([getWeather(), searchDocs()]) }).tools;
    expect(tools.map((tool) => tool.name)).toEqual(['get_weather', 'search_docs']);
  });

  it("exports a Zod tool through its Standard JSON Schema, without the $schema key", () => {
    const tool = defineTool({ name: 'search', inputSchema: z.object({ q: z.string() }), execute: () => 1 });
    expect(openaiChatTools([tool])[0]?.function.parameters).toEqual({
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
      additionalProperties: false,
    });
  });

  it('throws, naming the tool, for a Standard Schema that cannot describe itself as JSON Schema', () => {
    const tool = defineTool({ name: 'search', inputSchema: v.object({ q: v.string() }), execute: () => 1 });
    expect(() => anthropicTools([tool])).toThrow('anthropicTools: tool "search" has a Standard Schema that cannot produce a JSON Schema');
  });

  it("enforces each provider's name rules", () => {
    const dotted = defineTool({ name: 'files.read', inputSchema: { type: 'object' }, execute: () => 1 });
    expect(() => openaiChatTools([dotted])).toThrow('openaiChatTools: tool name "files.read" is not allowed by OpenAI, which requires /^[a-zA-Z0-9_-]{1,64}$/; rename the tool.');
    expect(() => anthropicTools([dotted])).toThrow('is not allowed by Anthropic');
    expect(geminiFunctionDeclarations([dotted])[0]?.name).toBe('files.read');
    expect(mcpToolList([dotted])[0]?.name).toBe('files.read');
    const long = defineTool({ name: 'x'.repeat(65), inputSchema: { type: 'object' }, execute: () => 1 });
    expect(() => openaiResponsesTools([long])).toThrow('is not allowed by OpenAI');
    const digit = defineTool({ name: '1tool', inputSchema: { type: 'object' }, execute: () => 1 });
    expect(() => geminiFunctionDeclarations([digit])).toThrow('is not allowed by Gemini');
  });
});
