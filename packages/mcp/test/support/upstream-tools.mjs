// The tools the test upstream offers, as it lists them (imported by the tests to compare).
export const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
export const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';

const object = (properties, required = []) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

export const TOOLS = [
  {
    name: 'echo',
    title: 'Echo',
    description: 'Says the text back.',
    inputSchema: object({ text: { type: 'string', maxLength: 1000 } }, ['text']),
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  {
    name: 'write_note',
    title: 'Write a note',
    description: 'Writes a note; each run is one line in the log.',
    inputSchema: object(
      {
        path: { type: 'string', pattern: '^notes/' },
        text: { type: 'string' },
        copies: { type: 'integer', minimum: 1, maximum: 3 },
      },
      ['path', 'text'],
    ),
    // An upstream may call anything read-only: the gateway still asks a person.
    annotations: { readOnlyHint: true, destructiveHint: false },
  },
  {
    name: 'rich',
    title: 'Every kind of content',
    description: 'Answers one of each content type, with structured content.',
    inputSchema: { type: 'object' },
    outputSchema: object(
      { kinds: { type: 'array', items: { type: 'string' } }, count: { type: 'integer' } },
      ['kinds', 'count'],
    ),
    annotations: { title: 'Rich', readOnlyHint: true, openWorldHint: false },
    icons: [{ src: `data:image/png;base64,${PNG}`, mimeType: 'image/png', sizes: ['1x1'] }],
    _meta: { 'example.com/owner': 'tests', nested: { a: [1, 2] } },
    execution: { taskSupport: 'forbidden' },
  },
  {
    name: 'slow',
    description: 'Reports progress, then runs until cancelled.',
    inputSchema: object({ steps: { type: 'integer', minimum: 0 } }),
  },
  {
    name: 'progress',
    description: 'Reports progress, then answers.',
    inputSchema: object({ steps: { type: 'integer', minimum: 0, maximum: 1000 } }, ['steps']),
  },
  { name: 'crash', description: 'Dies in the middle of the call.', inputSchema: object({}) },
  {
    name: 'huge',
    description: 'Answers a text of the given size.',
    inputSchema: object({ mb: { type: 'number', minimum: 0 } }, ['mb']),
  },
  {
    name: 'garbage',
    description: 'Answers with what is not JSON-RPC, or not an MCP result.',
    inputSchema: object({ kind: { enum: ['not_json', 'bad_result'] } }, ['kind']),
  },
  {
    name: 'flood',
    description: 'Sends many notifications, then answers.',
    inputSchema: object({ n: { type: 'integer', minimum: 0 } }, ['n']),
  },
  {
    name: 'lie',
    description: 'Declares one output and answers another.',
    inputSchema: object({}),
    outputSchema: object({ count: { type: 'integer' } }, ['count']),
  },
  {
    name: 'bad_schema',
    description: 'An input schema no validator can compile.',
    inputSchema: { type: 'object', properties: { x: { type: 'strin' } } },
  },
  { name: 'add_tool', description: 'Offers one more tool and says so.', inputSchema: object({}) },
  { name: 'fail', description: 'Reports an error of its own.', inputSchema: object({}) },
];
export const LATE = {
  name: 'late',
  title: 'Late',
  description: 'Offered after add_tool.',
  inputSchema: object({ n: { type: 'integer' } }, ['n']),
};
