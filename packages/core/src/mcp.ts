// The Model Context Protocol: a gate's tools as an MCP server lists them and answers their calls,
// and an MCP server's tools brought into a gate.
export {
  MCP_TOOL_NAME,
  mcpToolList,
  mcpToolResult,
  type McpToolListEntry,
  type McpToolResult,
} from './providers/mcp.ts';
export {
  McpToolError,
  mcpTools,
  type McpCallResult,
  type McpClientLike,
  type McpToolInfo,
  type McpToolPolicy,
  type McpToolsOptions,
} from './providers/mcp-client.ts';
