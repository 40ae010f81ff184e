import type { Tool as AnthropicSdkTool } from '@anthropic-ai/sdk/resources/messages';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool } from 'openai/resources/responses/responses';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropicTools } from '../../src/anthropic.ts';
import { createToolGate, defineTool } from '../../src/index.ts';
import { geminiFunctionDeclarations } from '../../src/gemini.ts';
import { mcpToolList } from '../../src/mcp.ts';
import { openaiChatTools, openaiResponsesTools, openaiStrictSchema } from '../../src/openai.ts';
import { toolJsonSchema } from '../../src/kit.ts';
import { getWeather, searchDocs } from '@toolgate/test-utils';

const strictable = defineTool({
  name: 'get_forecast',
  description: 'Daily forecast.',
  inputSchema: {
    type: 'object',
    properties: {
      location: { type: 'string' },
      unit: { type: ['string', 'null'], enum: ['celsius', 'fahrenheit', null] },
      days: {
        type: 'array',
        items: {
          type: 'object',
          properties: { date: { type: 'string', format: 'date' } },
          required: ['date'],
        },
      },
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
              items: {
                type: 'object',
                properties: { date: { type: 'string', format: 'date' } },
                required: ['date'],
                additionalProperties: false,
              },
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
    expect(
      openaiStrictSchema({
        type: 'object',
        properties: { a: { allOf: [{ type: 'string' }] } },
        required: ['a'],
        additionalProperties: true,
      }),
    ).toEqual({
      ok: false,
      problems: [
        '/properties/a uses "allOf", which strict mode does not support',
        '(root) allows additional properties; strict mode needs "additionalProperties": false',
      ],
    });
    expect(
      openaiStrictSchema({ type: 'object', properties: { meta: { type: 'object' } }, required: ['meta'] }),
    ).toMatchObject({
      ok: false,
      problems: [
        '/properties/meta is an object with no "properties"; strict mode cannot describe a free-form object',
      ],
    });
  });

  it('exports flat Responses function tools', () => {
    const tools: FunctionTool[] = openaiResponsesTools([strictable], { strict: false });
    expect(tools[0]).toMatchObject({
      type: 'function',
      name: 'get_forecast',
      strict: false,
      parameters: { required: ['location', 'unit', 'days'] },
    });
    expect(tools[0]?.parameters).not.toHaveProperty('additionalProperties');
  });

  it('exports Anthropic tools and Gemini function declarations', () => {
    const anthropic: AnthropicSdkTool[] = anthropicTools([getWeather()]);
    expect(anthropic[0]).toMatchObject({
      name: 'get_weather',
      description: 'Current weather for a city.',
      input_schema: { type: 'object', required: ['location'] },
    });
    expect(geminiFunctionDeclarations([getWeather()])[0]).toMatchObject({
      name: 'get_weather',
      parametersJsonSchema: { type: 'object' },
    });
  });

  it('exports MCP tools/list entries that pass the SDK schema', () => {
    const tools = ListToolsResultSchema.parse({ tools: mcpToolList([getWeather(), searchDocs()]) }).tools;
    expect(tools.map((tool) => tool.name)).toEqual(['get_weather', 'search_docs']);
  });

  it('exports a Zod tool through its Standard JSON Schema, without the $schema key', () => {
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
    expect(() => anthropicTools([tool])).toThrow(
      'anthropicTools: tool "search" has a Standard Schema that cannot produce a JSON Schema',
    );
  });

  it("enforces each provider's name rules", () => {
    const dotted = defineTool({ name: 'files.read', inputSchema: { type: 'object' }, execute: () => 1 });
    expect(() => openaiChatTools([dotted])).toThrow(
      'openaiChatTools: tool name "files.read" is not allowed by OpenAI, which requires /^[a-zA-Z0-9_-]{1,64}$/; rename the tool.',
    );
    expect(() => anthropicTools([dotted])).toThrow('is not allowed by Anthropic');
    expect(geminiFunctionDeclarations([dotted])[0]?.name).toBe('files.read');
    expect(mcpToolList([dotted])[0]?.name).toBe('files.read');
    const long = defineTool({ name: 'x'.repeat(65), inputSchema: { type: 'object' }, execute: () => 1 });
    expect(() => openaiResponsesTools([long])).toThrow('is not allowed by OpenAI');
    const digit = defineTool({ name: '1tool', inputSchema: { type: 'object' }, execute: () => 1 });
    expect(() => geminiFunctionDeclarations([digit])).toThrow('is not allowed by Gemini');
  });
});

// What zod-to-json-schema (and so the MCP TypeScript SDK) writes: draft-07, where `items` as an
// array is a tuple, `dependencies` is a keyword and `definitions` holds the shared schemas.
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
const plot = defineTool({
  name: 'plot',
  description: 'Plot a point.',
  inputSchema: {
    $schema: DRAFT_07,
    type: 'object',
    properties: {
      at: {
        type: 'array',
        items: [{ type: 'string' }, { type: 'number' }],
        additionalItems: false,
        minItems: 2,
      },
      style: { $ref: '#/definitions/style', description: 'How to draw it.' },
      label: { type: 'string' },
      font: { type: 'string' },
    },
    required: ['at', 'style'],
    dependencies: { label: ['font'] },
    definitions: { style: { type: 'string', enum: ['dot', 'cross'] } },
  },
  execute: () => 'ok',
});

// The same schema as draft 2020-12 reads it, which is what every provider is sent.
const plotAs2020 = {
  type: 'object',
  properties: {
    at: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false, minItems: 2 },
    style: { $ref: '#/$defs/style', description: 'How to draw it.' },
    label: { type: 'string' },
    font: { type: 'string' },
  },
  required: ['at', 'style'],
  dependentRequired: { label: ['font'] },
  $defs: { style: { type: 'string', enum: ['dot', 'cross'] } },
};

describe('draft-07 tool schemas out', () => {
  it('sends every provider the 2020-12 schema that means what the draft-07 one means', () => {
    expect(toolJsonSchema(plot)).toEqual(plotAs2020);
    expect(anthropicTools([plot])[0]?.input_schema).toEqual(plotAs2020);
    expect(geminiFunctionDeclarations([plot])[0]?.parametersJsonSchema).toEqual(plotAs2020);
    expect(mcpToolList([plot])[0]?.inputSchema).toEqual(plotAs2020);
    expect(openaiResponsesTools([plot], { strict: false })[0]?.parameters).toEqual(plotAs2020);
    expect(ListToolsResultSchema.parse({ tools: mcpToolList([plot]) }).tools[0]?.inputSchema).toEqual(
      plotAs2020,
    );
  });

  it('describes to the model exactly the values the gate accepts', async () => {
    const described = new Ajv2020({ strict: true }).compile(toolJsonSchema(plot));
    const gate = createToolGate({ tools: [plot] });
    const values = [
      { at: ['x', 1], style: 'dot' },
      { at: ['x', '1'], style: 'dot' },
      { at: ['x', 1, 2], style: 'dot' },
      { at: ['x'], style: 'dot' },
      { at: ['x', 1], style: 'line' },
      { at: ['x', 1], style: 'dot', label: 'A' },
      { at: ['x', 1], style: 'dot', label: 'A', font: 'serif' },
    ];
    const verdicts = await Promise.all(
      values.map(async (value) => [
        described(value),
        (await gate.run({ name: 'plot', arguments: value })).status === 'committed',
      ]),
    );
    expect(verdicts.map(([model]) => model)).toEqual([true, false, false, false, false, false, true]);
    expect(verdicts.map(([, gated]) => gated)).toEqual(verdicts.map(([model]) => model));
  });

  it('checks a draft-07 schema for OpenAI strict mode as what it means, not as 2020-12 would misread it', () => {
    expect(openaiStrictSchema(plot.inputSchema as Record<string, unknown>)).toEqual({
      ok: false,
      problems: [
        '(root) uses "dependentRequired", which strict mode does not support',
        '/properties/at uses "prefixItems", which strict mode does not support',
        '/properties/label is optional: strict mode needs every property in "required" (make it required with a "null" type, or export with strict: false)',
        '/properties/font is optional: strict mode needs every property in "required" (make it required with a "null" type, or export with strict: false)',
      ],
    });
    const shared = {
      $schema: DRAFT_07,
      type: 'object',
      properties: { style: { $ref: '#/definitions/style' } },
      required: ['style'],
      definitions: { style: { enum: ['dot', 'cross'] } },
    };
    expect(openaiStrictSchema(shared)).toEqual({
      ok: true,
      schema: {
        type: 'object',
        properties: { style: { $ref: '#/$defs/style' } },
        required: ['style'],
        additionalProperties: false,
        $defs: { style: { enum: ['dot', 'cross'] } },
      },
    });
  });

  it('refuses a $schema no path reads, naming the tool, in the exports and in the gate', () => {
    const old = defineTool({
      name: 'old',
      inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' },
      execute: () => 1,
    });
    const said =
      '$schema "http://json-schema.org/draft-04/schema#" is not a dialect toolgate reads; use JSON Schema draft 2020-12';
    expect(() => anthropicTools([old])).toThrow(`anthropicTools: tool "old": ${said}`);
    expect(createToolGate({ tools: [old] }).check()).toEqual([
      {
        tool: 'old',
        message: expect.stringContaining(`the input schema of tool "old" does not compile: ${said}`),
      },
    ]);
  });
});
