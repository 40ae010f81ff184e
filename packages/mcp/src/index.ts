export { CALL_ID } from './answer.ts';
export {
  ConfigError,
  isPostgres,
  readGatewayConfig,
  type GatewayConfig,
  type HttpUpstream,
  type StdioUpstream,
  type ToolPolicy,
  type UpstreamSpec,
} from './config.ts';
export { createMcpGateway, type McpGateway, type McpGatewayOptions } from './gateway.ts';
