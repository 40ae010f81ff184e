import type { RepairKind } from '../proposal/repair.ts';
import { defineTool, type JsonSchemaObject, type ToolConfig, type ToolDefinition } from '../tool/tool.ts';

/**
 * A tool as an MCP server lists it in `tools/list` (only the fields used here).
 *
 * @example
 * const info: McpToolInfo = { name: 'echo', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } };
 */
export interface McpToolInfo {
  readonly name: string;
  readonly description?: string | undefined;
  readonly inputSchema: { readonly type: 'object'; readonly [key: string]: unknown };
  readonly annotations?:
    | { readonly readOnlyHint?: boolean | undefined; readonly destructiveHint?: boolean | undefined }
    | undefined;
}

/**
 * What an MCP `tools/call` result may hold (only the fields used here).
 *
 * @example
 * const result: McpCallResult = { content: [{ type: 'text', text: 'Echo: hi' }] };
 */
export interface McpCallResult {
  readonly content?: readonly unknown[];
  readonly structuredContent?: Record<string, unknown> | undefined;
  readonly isError?: boolean | undefined;
  readonly [key: string]: unknown;
}

/**
 * The part of a connected MCP client this adapter uses. The `Client` of `@modelcontextprotocol/sdk`
 * fits it as it is; toolgate does not depend on that package.
 *
 * @example
 * const client: McpClientLike = new Client({ name: 'my-app', version: '1.0.0' });
 */
export interface McpClientLike {
  listTools(
    params?: { cursor?: string },
    options?: { signal?: AbortSignal },
  ): Promise<{ readonly tools: readonly McpToolInfo[]; readonly nextCursor?: string | undefined }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: { signal?: AbortSignal },
  ): Promise<McpCallResult>;
}

/**
 * Policy an app adds to an MCP tool, which the server cannot express: approval, authorization, a
 * commit to the app's store, a timeout, repairs.
 *
 * @example
 * const policy: McpToolPolicy = { needsApproval: true, timeoutMs: 30_000 };
 */
export interface McpToolPolicy {
  readonly needsApproval?: boolean | ((input: Record<string, unknown>) => boolean);
  readonly authorize?: (
    input: Record<string, unknown>,
    ctx: { readonly call: { readonly id: string; readonly name: string }; readonly state: unknown },
  ) => boolean | string | PromiseLike<boolean | string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the app's store state, as in defineTool
  readonly commit?: (state: any, output: unknown, input: Record<string, unknown>) => object;
  readonly timeoutMs?: number;
  readonly repair?: readonly RepairKind[];
}

/**
 * What {@link mcpTools} takes beside the client.
 *
 * @example
 * await mcpTools(client, { prefix: 'files_', policy: { delete_file: { needsApproval: true } } });
 */
export interface McpToolsOptions {
  /** Put before each name (for two servers with the same tool names, or a provider's name rules). */
  readonly prefix?: string;
  /** Map a server's name to the name the model sees (default: `prefix` + name). */
  readonly rename?: (name: string) => string;
  /** Keep only the tools this returns true for. */
  readonly filter?: (tool: McpToolInfo) => boolean;
  /** Per-tool policy, by the server's tool name. */
  readonly policy?: Readonly<Record<string, McpToolPolicy>>;
  readonly signal?: AbortSignal;
}

/**
 * The error an MCP tool's `execute` throws for a result with `isError: true`, so that the call
 * ends `failed` (`tool_error`) with the server's text; the full result is on `result`.
 *
 * @example
 * if (error instanceof McpToolError) console.log(error.result.content);
 */
export class McpToolError extends Error {
  readonly result: McpCallResult;
  constructor(tool: string, result: McpCallResult) {
    super(`${tool} reported an error: ${textOf(result) || 'no details'}`);
    this.name = 'McpToolError';
    this.result = result;
  }
}

/**
 * Turns a connected MCP client's `tools/list` into toolgate tools, so that a server's tools get the
 * same validation (against the server's own input schema, in the dialect its `$schema` names, or
 * 2020-12 when it names none, as MCP specifies), approval and commit discipline as the app's. Each `execute` sends `tools/call` with
 * the call's abort signal, so a cancel or timeout in the gate cancels the request on the server. A result with `isError: true` fails the call; the
 * output is the result's `structuredContent` when it has one, else its text.
 *
 * @example
 * const client = new Client({ name: 'my-app', version: '1.0.0' });
 * await client.connect(transport);
 * const gate = createToolGate({ tools: [...appTools, ...(await mcpTools(client, { policy: { write_file: { needsApproval: true } } }))] });
 */
export async function mcpTools(
  client: McpClientLike,
  options: McpToolsOptions = {},
): Promise<ToolDefinition[]> {
  const listed: McpToolInfo[] = [];
  let cursor: string | undefined;
  const seenCursors = new Set<string>();
  do {
    const page = await client.listTools(
      cursor === undefined ? undefined : { cursor },
      options.signal === undefined ? undefined : { signal: options.signal },
    );
    listed.push(...page.tools);
    cursor = page.nextCursor;
    if (cursor !== undefined && seenCursors.has(cursor)) {
      throw new Error(
        `mcpTools: the server returned the cursor "${cursor}" twice; its tools/list pagination loops.`,
      );
    }
    if (cursor !== undefined) seenCursors.add(cursor);
  } while (cursor !== undefined);

  const rename = options.rename ?? ((name: string) => `${options.prefix ?? ''}${name}`);
  return listed
    .filter((info) => options.filter?.(info) ?? true)
    .map((info) => {
      const policy = options.policy?.[info.name] ?? {};
      return defineTool<JsonSchemaObject, unknown>({
        name: rename(info.name),
        ...(info.description === undefined ? {} : { description: info.description }),
        // Kept with its `$schema`: the TypeScript SDK and Zod-based servers write draft-07, and MCP
        // reads a schema in the dialect its `$schema` names (2020-12 when it names none).
        inputSchema: info.inputSchema,
        // The policy is typed for the arguments an MCP tool takes (an object); the gate validates them first.
        ...(policy as Partial<ToolConfig<JsonSchemaObject, unknown>>),
        execute: async (input, { signal }) => {
          const result = await client.callTool(
            { name: info.name, arguments: input as Record<string, unknown> },
            undefined,
            { signal },
          );
          if (result.isError === true) throw new McpToolError(info.name, result);
          return outputOf(result);
        },
      });
    });
}

function outputOf(result: McpCallResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const text = textOf(result);
  if (text !== '' && result.content?.every((part) => isText(part))) return text;
  return result.content ?? result;
}

function textOf(result: McpCallResult): string {
  return (result.content ?? [])
    .filter(isText)
    .map((part) => part.text)
    .join('\n');
}

function isText(part: unknown): part is { type: 'text'; text: string } {
  return (
    typeof part === 'object' &&
    part !== null &&
    (part as { type?: unknown }).type === 'text' &&
    typeof (part as { text?: unknown }).text === 'string'
  );
}
