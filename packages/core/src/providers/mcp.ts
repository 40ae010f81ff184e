import { checkToolNames, toolJsonSchema } from '../tool/json-schema-export.ts';
import { outcomeText } from '../reply/outcome.ts';
import type { SettledCall } from '../record/record.ts';
import type { ToolDefinition } from '../tool/tool.ts';

/**
 * An MCP `CallToolResult`: text content, `isError` for every call that did not commit (so the
 * model can correct itself), and `structuredContent` when the output is an object.
 *
 * @example
 * const result: McpToolResult = { content: [{ type: 'text', text: '{"ok":true}' }], structuredContent: { ok: true } };
 */
export interface McpToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
}

/**
 * Answers one settled call as an MCP `CallToolResult`.
 *
 * @example
 * server.setRequestHandler(CallToolRequestSchema, async (req) => mcpToolResult(await gate.run(req.params)));
 */
export function mcpToolResult(call: SettledCall): McpToolResult {
  const result: McpToolResult = { content: [{ type: 'text', text: outcomeText(call) }] };
  if (call.status !== 'committed') result.isError = true;
  else if (typeof call.output === 'object' && call.output !== null && !Array.isArray(call.output)) {
    result.structuredContent = call.output as Record<string, unknown>;
  }
  return result;
}

/**
 * MCP's rule for tool names (spec 2025-11-25).
 *
 * @example
 * MCP_TOOL_NAME.test('files.read'); // true
 */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * One entry of an MCP `tools/list` result.
 *
 * @example
 * const entry: McpToolListEntry = { name: 'search', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } };
 */
export interface McpToolListEntry {
  [key: string]: unknown;
  name: string;
  description?: string;
  inputSchema: { [key: string]: unknown; type: 'object' };
}

/**
 * The gate's tools as MCP `tools/list` entries, for serving them from an MCP server (answer each
 * `tools/call` with `mcpToolResult(await gate.run(request.params, { signal }))`).
 *
 * @example
 * server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: mcpToolList(gate.tools) }));
 */
export function mcpToolList(tools: readonly ToolDefinition[]): McpToolListEntry[] {
  checkToolNames(tools, MCP_TOOL_NAME, 'mcpToolList', 'MCP');
  return tools.map((tool) => {
    const schema = toolJsonSchema(tool, 'mcpToolList');
    if (schema['type'] !== 'object') {
      throw new Error(
        `mcpToolList: tool "${tool.name}" must take an object (its input schema has type ${JSON.stringify(schema['type'] ?? null)}).`,
      );
    }
    const inputSchema = { ...schema, type: 'object' as const };
    return tool.description === undefined
      ? { name: tool.name, inputSchema }
      : { name: tool.name, description: tool.description, inputSchema };
  });
}
