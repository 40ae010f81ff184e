import { ajvJsonSchema } from '@toolgate/core/kit';
import { defineTool, type ToolDefinition } from '@toolgate/core';
import { McpToolError } from '@toolgate/core/mcp';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import type { ToolPolicy } from './config.ts';
import type { Upstream, UpstreamTool } from './upstream.ts';

/** One tool as the gateway offers it: the name a client sees, and the upstream tool behind it. */
export interface GatewayTool {
  readonly name: string;
  readonly upstream: Upstream;
  readonly tool: UpstreamTool;
  readonly approval: 'always' | 'never';
  /** Why it is not listed, when one of its schemas does not compile (its calls are refused). */
  readonly broken?: string;
  readonly definition: ToolDefinition;
}

/** Where a running call's upstream progress goes: the client requests waiting on that call id. */
export type ProgressSink = (callId: string, progress: Progress) => void;

/** What the catalog needs to make tool definitions. */
export interface CatalogOptions {
  readonly policies: Readonly<Record<string, ToolPolicy>>;
  readonly timeoutMs: number;
  readonly progress: ProgressSink;
  /** Keeps an upstream's `isError` result for the requests answering that call id. */
  readonly upstreamError: (callId: string, result: Record<string, unknown>) => void;
}

/**
 * The gateway's tools from every upstream's current listing. With one upstream a tool keeps its
 * upstream name; with several, it is `<upstream>__<tool>`, so two servers' `search` tools stay apart.
 */
export function catalogOf(upstreams: readonly Upstream[], options: CatalogOptions): readonly GatewayTool[] {
  const prefixed = upstreams.length > 1;
  const tools: GatewayTool[] = [];
  for (const upstream of upstreams) {
    for (const tool of upstream.tools()) {
      const name = prefixed ? `${upstream.name}__${tool.name}` : tool.name;
      const policy = options.policies[name] ?? {};
      const approval = policy.approval ?? 'always';
      const timeoutMs = policy.timeoutMs ?? options.timeoutMs;
      const broken = schemaProblem(tool);
      const checkOutput =
        broken === undefined && tool.outputSchema !== undefined
          ? ajvJsonSchema(tool.outputSchema)
          : undefined;
      const definition = defineTool({
        name,
        ...(typeof tool['description'] === 'string' ? { description: tool['description'] } : {}),
        inputSchema: tool.inputSchema,
        needsApproval: approval !== 'never',
        timeoutMs,
        async execute(input, ctx) {
          const result = await upstream.call(tool.name, (input ?? {}) as Record<string, unknown>, {
            signal: ctx.signal,
            // The gateway's own timeout ends the call (cancelled / timeout); the SDK's must not come first.
            timeoutMs: timeoutMs + 1000,
            onprogress: (progress) => options.progress(ctx.call.id, progress),
          });
          if (result['isError'] === true) {
            // The upstream ran the tool and says it failed: the call ends failed / tool_error with
            // its words, and the client is answered with its result as it was sent.
            options.upstreamError(ctx.call.id, result);
            throw new McpToolError(name, result);
          }
          if (checkOutput !== undefined) {
            const checked = checkOutput(result['structuredContent']);
            if (!checked.ok) {
              const issues = checked.issues
                .map((issue) => `${issue.path || '(structuredContent)'}: ${issue.message}`)
                .join('; ');
              throw new Error(
                `the upstream ran the tool, but its structuredContent does not match the outputSchema it declares (${issues.slice(0, 500)}); the result was not passed on`,
              );
            }
          }
          return result;
        },
      });
      tools.push({ name, upstream, tool, approval, definition, ...(broken === undefined ? {} : { broken }) });
    }
  }
  return tools;
}

/** Why an upstream's schemas cannot be used, or `undefined` when both compile. */
function schemaProblem(tool: UpstreamTool): string | undefined {
  for (const [which, schema] of [
    ['input', tool.inputSchema],
    ['output', tool.outputSchema],
  ] as const) {
    if (schema === undefined) continue;
    try {
      ajvJsonSchema(schema);
    } catch (error) {
      return `its ${which} schema does not compile (${(error as Error).message.slice(0, 300)})`;
    }
  }
  return undefined;
}

/** The tools as a client's `tools/list` shows them: each upstream entry as sent, under the gateway's name. */
export function listEntries(tools: readonly GatewayTool[]): Record<string, unknown>[] {
  return tools.filter((tool) => tool.broken === undefined).map((tool) => ({ ...tool.tool, name: tool.name }));
}
