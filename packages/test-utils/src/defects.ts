import type { RepairKind, ToolDefinition } from '@toolgate/core';
import { getWeather, listTickets, searchDocs } from './tools.ts';

/** The known defects, each as the arguments one streamed call carries. */
export const DEFECTS: {
  readonly defect: string;
  readonly tool: (repair?: readonly RepairKind[]) => ToolDefinition;
  readonly name: string;
  readonly args: string;
  readonly repair: RepairKind;
  readonly reason: { code: string; message: RegExp };
  readonly repaired?: unknown;
}[] = [
  {
    defect: 'double-encoded arguments',
    tool: getWeather,
    name: 'get_weather',
    args: JSON.stringify(JSON.stringify({ location: 'Paris, France', unit: 'celsius' })),
    repair: 'double_encoded',
    reason: { code: 'invalid_json', message: /double-encoded/ },
    repaired: { location: 'Paris, France', unit: 'celsius' },
  },
  {
    defect: 'trailing text after the JSON',
    tool: searchDocs,
    name: 'search_docs',
    args: '{"query":"rate limits","limit":5}\nThis searches the docs for rate limits.',
    repair: 'trailing_text',
    reason: { code: 'invalid_json', message: /text after the JSON object/ },
    repaired: { query: 'rate limits', limit: 5 },
  },
  {
    defect: 'a code fence around the JSON',
    tool: searchDocs,
    name: 'search_docs',
    args: '```json\n{"query":"rate limits"}\n```',
    repair: 'trailing_text',
    reason: { code: 'invalid_json', message: /code fence/ },
    repaired: { query: 'rate limits' },
  },
  {
    defect: 'a number and a boolean as strings',
    tool: searchDocs,
    name: 'search_docs',
    args: '{"query":"rate limits","limit":"5","include_archived":"false"}',
    repair: 'string_scalars',
    reason: {
      code: 'invalid_arguments',
      message: /\/limit must be integer.*\/include_archived must be boolean/,
    },
    repaired: { query: 'rate limits', limit: 5, include_archived: false },
  },
  {
    defect: 'a nested array as a JSON string',
    tool: searchDocs,
    name: 'search_docs',
    args: '{"query":"q","tags":"[\\"a\\",\\"b\\"]"}',
    repair: 'stringified_json',
    reason: { code: 'invalid_arguments', message: /\/tags must be array/ },
    repaired: { query: 'q', tags: ['a', 'b'] },
  },
  {
    defect: 'two objects concatenated',
    tool: getWeather,
    name: 'get_weather',
    args: '{"location":"Tokyo","unit":"celsius"}{"location":"Osaka","unit":"celsius"}',
    repair: 'trailing_text',
    reason: { code: 'invalid_json', message: /two JSON objects back to back/ },
  },
  {
    defect: '"" for a tool without arguments',
    tool: listTickets,
    name: 'list_open_tickets',
    args: '',
    repair: 'empty_arguments',
    reason: { code: 'invalid_json', message: /empty string/ },
    repaired: {},
  },
];

/** A multi_tool_use.parallel wrapper's arguments, as GPT models have sent them. */
export const WRAPPER = JSON.stringify({
  tool_uses: [
    { recipient_name: 'functions.get_weather', parameters: { location: 'Rome', unit: 'celsius' } },
    { recipient_name: 'functions.get_time', parameters: { timezone: 'Europe/Rome' } },
  ],
});
