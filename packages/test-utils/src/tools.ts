import { createStore } from 'zustand/vanilla';
import { defineTool, type RepairKind } from '@toolgate/core';

/** An app whose state the tools change only on commit. */
export interface Workspace {
  readonly files: Readonly<Record<string, string>>;
  readonly weather: readonly string[];
}

export function createWorkspace() {
  return createStore<Workspace>()(() => ({ files: {}, weather: [] }));
}

export function writeFile(repair: readonly RepairKind[] = []) {
  return defineTool({
    name: 'write_file',
    description: 'Write a text file.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    repair,
    execute: (input) => input,
    commit: (state: Workspace, output) => ({ files: { ...state.files, [output.path]: output.content } }),
  });
}

export function getWeather(repair: readonly RepairKind[] = []) {
  return defineTool({
    name: 'get_weather',
    description: 'Current weather for a city.',
    inputSchema: {
      type: 'object',
      properties: { location: { type: 'string' }, unit: { enum: ['celsius', 'fahrenheit'] } },
      required: ['location'],
      additionalProperties: false,
    },
    repair,
    execute: (input) => ({ location: input.location, temperature: 18 }),
    commit: (state: Workspace, output) => ({ weather: [...state.weather, output.location] }),
  });
}

export function getTime(repair: readonly RepairKind[] = []) {
  return defineTool({
    name: 'get_time',
    inputSchema: {
      type: 'object',
      properties: { timezone: { type: 'string' } },
      required: ['timezone'],
      additionalProperties: false,
    },
    repair,
    execute: (input) => `12:00 in ${input.timezone}`,
  });
}

export function searchDocs(repair: readonly RepairKind[] = []) {
  return defineTool({
    name: 'search_docs',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        limit: { type: 'integer', minimum: 1 },
        include_archived: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['query'],
      additionalProperties: false,
    },
    repair,
    execute: (input) => ({ hits: input.limit ?? 10 }),
  });
}

export function listTickets(repair: readonly RepairKind[] = []) {
  return defineTool({
    name: 'list_open_tickets',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    repair,
    execute: () => ['T-1'],
  });
}
