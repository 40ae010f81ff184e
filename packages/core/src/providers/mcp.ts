import { outcomeText } from '../outcome.ts';
import type { SettledCall } from '../record.ts';

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
