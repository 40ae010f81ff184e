import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ProgressNotificationSchema,
  ToolListChangedNotificationSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { UpstreamSpec } from './config.ts';

/**
 * One tool as its upstream lists it, every field kept as sent (title, annotations, icons, `_meta`,
 * fields of newer protocol revisions).
 */
export interface UpstreamTool {
  readonly [key: string]: unknown;
  readonly name: string;
  readonly inputSchema: { readonly [key: string]: unknown };
  readonly outputSchema?: { readonly [key: string]: unknown };
}

/** What a connection tells the gateway. */
export interface UpstreamEvents {
  /** After each listing that changed what the upstream offers (the first one included). */
  readonly onTools: (tools: readonly UpstreamTool[]) => void;
  readonly log: (line: string) => void;
}

/** How one upstream call is made. */
export interface UpstreamCallOptions {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly onprogress?: (progress: Progress) => void;
}

/** A live connection to one upstream, respawned or reconnected when it drops. */
export interface Upstream {
  readonly name: string;
  /** Resolves once the first connection has listed its tools, or has failed (then `tools()` is empty). */
  readonly ready: Promise<void>;
  readonly tools: () => readonly UpstreamTool[];
  readonly call: (
    tool: string,
    args: Record<string, unknown>,
    options: UpstreamCallOptions,
  ) => Promise<Record<string, unknown>>;
  readonly close: () => Promise<void>;
}

/**
 * An upstream's word that cannot be passed on: a dead connection, an answer that is not an MCP
 * result, one over the size limit. The message says what happened, for the person and the model.
 */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
}

const ToolEntry = z.looseObject({ name: z.string(), inputSchema: z.looseObject({}) });
const ListPage = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
const AnyResult = z.looseObject({});
const MAX_PAGES = 100;
const MAX_TOOLS = 10_000;
const NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Options for {@link connectUpstream}. */
export interface ConnectOptions {
  readonly connectTimeoutMs?: number;
  /** The longest message taken from the upstream, in bytes (stdio) and characters of a result. */
  readonly maxMessageBytes: number;
  /** Waits before connecting again: 0.5 s, doubling up to 30 s (for tests: shorter). */
  readonly retryMs?: (attempt: number) => number;
}

/** The SDK transport for an upstream: its process spawned (its stderr in the gateway's log), or its URL. */
function transportFor(
  name: string,
  spec: UpstreamSpec,
  maxMessageBytes: number,
  log: (line: string) => void,
): Transport {
  if ('url' in spec) {
    return new StreamableHTTPClientTransport(new URL(spec.url), {
      requestInit: { headers: { ...spec.headers } },
    });
  }
  const transport = new StdioClientTransport({
    command: spec.command,
    args: [...(spec.args ?? [])],
    ...(spec.env === undefined ? {} : { env: { ...spec.env } }),
    ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
    stderr: 'pipe',
    maxBufferSize: maxMessageBytes,
  });
  let partial = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    if (partial.length > 4096) partial = '';
    for (const line of lines) if (line.trim() !== '') log(`[${name}] ${line.slice(0, 2000)}`);
  });
  return transport;
}

/**
 * Every page of an upstream's `tools/list`, each tool as sent. Entries that are not MCP tools (no
 * valid name, no object input schema) are left out and logged: one bad entry must not make a
 * client's SDK refuse the whole list. A listing that loops or grows without end is cut off.
 */
async function listTools(
  client: Client,
  name: string,
  timeout: number,
  log: (line: string) => void,
): Promise<UpstreamTool[]> {
  const found: UpstreamTool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      ListPage,
      { timeout },
    );
    for (const entry of answer.tools) {
      const tool = ToolEntry.safeParse(entry);
      if (!tool.success || !NAME.test(tool.data.name) || tool.data.inputSchema['type'] !== 'object') {
        log(
          `[${name}] left out a tool that is not a valid MCP tool (a name of 1 to 128 letters, digits, "_", "." or "-", and an object input schema): ${JSON.stringify(entry).slice(0, 200)}`,
        );
        continue;
      }
      if (seen.has(tool.data.name)) {
        log(`[${name}] lists the tool "${tool.data.name}" twice; the first one is kept`);
        continue;
      }
      if (found.length >= MAX_TOOLS) break;
      seen.add(tool.data.name);
      found.push(entry as UpstreamTool);
    }
    cursor = answer.nextCursor;
    if (cursor === undefined || found.length >= MAX_TOOLS) break;
  }
  return found;
}

/** Checks an upstream's answer to `tools/call` before it may be passed on: its size, and that it is an MCP result. */
function checkResult(
  name: string,
  result: Record<string, unknown>,
  maxMessageBytes: number,
): Record<string, unknown> {
  const size = JSON.stringify(result).length;
  if (size > maxMessageBytes) {
    throw new UpstreamError(
      `the upstream "${name}" answered ${size} characters, over the gateway's limit of ${maxMessageBytes}; the result was not passed on`,
    );
  }
  const checked = CallToolResultSchema.safeParse(result);
  if (!checked.success) {
    const issues = checked.error.issues.map(
      (issue) => `${issue.path.join('/') || '(result)'}: ${issue.message}`,
    );
    throw new UpstreamError(
      `the upstream "${name}" answered something that is not an MCP tool result: ${issues.join('; ').slice(0, 500)}`,
    );
  }
  return result;
}

/**
 * Where each call's progress goes, by the progress token the gateway gave it. The SDK's own
 * per-request progress handler is let go as soon as the response is read, before notifications
 * read in the same chunk reach it, so the last ones would be lost; this handler outlives it.
 */
function progressRouter() {
  const sinks = new Map<string, (progress: Progress) => void>();
  let tokens = 0;
  return {
    /** The handler of `notifications/progress`. */
    heard: (notification: { params: { progressToken: string | number } & Progress }): void => {
      const { progressToken, ...progress } = notification.params;
      sinks.get(String(progressToken))?.(progress);
    },
    /** A token for one call's progress. */
    open: (sink: (progress: Progress) => void): string => {
      const token = `toolgate-${++tokens}`;
      sinks.set(token, sink);
      return token;
    },
    close: (token: string): void => {
      sinks.delete(token);
    },
  };
}

/**
 * What the gateway says of a call the upstream did not answer: a connection that closed while it
 * ran, an HTTP upstream that could not be reached (`unreachable` says why, and the gateway then
 * connects again), or the upstream's own error.
 */
function failedCall(
  name: string,
  spec: UpstreamSpec,
  error: Error,
  lastProblem: string | undefined,
): { readonly error: UpstreamError; readonly unreachable?: string } {
  const message = error.message;
  if (/Connection closed/i.test(message)) {
    return {
      error: new UpstreamError(
        `the upstream "${name}" closed its connection while the call ran${lastProblem === undefined ? '' : ` (${lastProblem})`}; it may or may not have taken effect`,
      ),
    };
  }
  if (
    'url' in spec &&
    /fetch failed|ECONNREFUSED|ECONNRESET|Session not found|HTTP 404|Streamable HTTP error/i.test(
      `${error.name} ${message}`,
    )
  ) {
    return {
      unreachable: `it could not be reached: ${message.slice(0, 200)}`,
      error: new UpstreamError(
        `the upstream "${name}" could not be reached (${message.slice(0, 200)}); the gateway is connecting to it again. The call may or may not have reached it`,
      ),
    };
  }
  return { error: new UpstreamError(`the upstream "${name}" answered with an error: ${message}`) };
}

/**
 * Connects to an upstream with the official SDK's Client, lists its tools (every page), follows
 * `notifications/tools/list_changed`, and starts it again when it dies or drops the connection.
 */
export function connectUpstream(
  name: string,
  spec: UpstreamSpec,
  events: UpstreamEvents,
  options: ConnectOptions,
): Upstream {
  const connectTimeoutMs = options.connectTimeoutMs ?? 20_000;
  const retryMs = options.retryMs ?? ((attempt: number) => Math.min(30_000, 500 * 2 ** attempt));
  let tools: readonly UpstreamTool[] = [];
  let listedJson = '';
  let client: Client | undefined;
  let closing = false;
  let attempt = 0;
  let connections = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;
  /** Why the last connection ended, for the calls it was carrying. */
  let lastProblem: string | undefined;
  let listing: Promise<void> | undefined;
  let listAgain = false;
  const progress = progressRouter();

  const describe = 'url' in spec ? spec.url : [spec.command, ...(spec.args ?? [])].join(' ');

  async function connect(): Promise<void> {
    const next = new Client({ name: 'toolgate-mcp', version: '0.1.0' }, { capabilities: {} });
    const transport = transportFor(name, spec, options.maxMessageBytes, events.log);
    next.onerror = (error) => {
      const message = error.message;
      if (/ReadBuffer exceeded/.test(message))
        lastProblem = `it sent a message over the gateway's limit of ${options.maxMessageBytes} bytes, so the gateway restarted it`;
      events.log(`[${name}] ${message.slice(0, 500)}`);
    };
    next.onclose = () => {
      if (client !== next) return;
      client = undefined;
      if (closing) return;
      events.log(
        `[${name}] the connection ended${lastProblem === undefined ? '' : ` (${lastProblem})`}; connecting again`,
      );
      schedule();
    };
    next.setNotificationHandler(ProgressNotificationSchema, progress.heard);
    next.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (client === next) relist(next);
    });
    await next.connect(transport, { timeout: connectTimeoutMs });
    if (closing) {
      await next.close();
      return;
    }
    client = next;
    await list(next);
    if (connections++ > 0) events.log(`[${name}] connected again`);
    attempt = 0;
    lastProblem = undefined;
  }

  function schedule(): void {
    if (closing || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch(connectLater);
    }, retryMs(attempt));
  }

  /** Lists again on `list_changed`: one listing at a time, and one more if it changed meanwhile. */
  function relist(from: Client): void {
    if (listing !== undefined) {
      listAgain = true;
      return;
    }
    listing = list(from)
      .catch((error: unknown) =>
        events.log(`[${name}] could not list its tools again: ${(error as Error).message}`),
      )
      .finally(() => {
        listing = undefined;
        if (listAgain && client === from) {
          listAgain = false;
          relist(from);
        }
      });
  }

  async function list(from: Client): Promise<void> {
    const found = await listTools(from, name, connectTimeoutMs, events.log);
    if (from !== client) return;
    const json = JSON.stringify(found);
    if (json === listedJson) return;
    listedJson = json;
    tools = found;
    events.onTools(tools);
  }

  function connectLater(error: unknown): void {
    events.log(`[${name}] could not connect to ${describe}: ${(error as Error).message}`);
    attempt += 1;
    schedule();
  }

  const ready = connect().catch(connectLater);

  return {
    name,
    ready,
    tools: () => tools,
    async call(tool, args, { signal, timeoutMs, onprogress }) {
      const live = client;
      if (live === undefined) {
        throw new UpstreamError(
          `the upstream "${name}" is not connected${lastProblem === undefined ? '' : ` (${lastProblem})`}; the gateway is connecting again, so the call was not sent`,
        );
      }
      let result: Record<string, unknown>;
      const progressToken = onprogress === undefined ? undefined : progress.open(onprogress);
      try {
        const params =
          progressToken === undefined
            ? { name: tool, arguments: args }
            : { name: tool, arguments: args, _meta: { progressToken } };
        result = await live.request({ method: 'tools/call', params }, AnyResult, {
          signal,
          timeout: timeoutMs,
        });
      } catch (error) {
        if (signal.aborted) throw error;
        const failure = failedCall(name, spec, error as Error, lastProblem);
        if (failure.unreachable !== undefined) {
          // An HTTP upstream that went away or restarted (its session is gone): connect again in the background.
          lastProblem = failure.unreachable;
          if (client === live) void live.close();
        }
        throw failure.error;
      } finally {
        if (progressToken !== undefined) progress.close(progressToken);
      }
      return checkResult(name, result, options.maxMessageBytes);
    },
    async close() {
      closing = true;
      if (retry !== undefined) clearTimeout(retry);
      retry = undefined;
      await ready;
      await client?.close().catch(() => undefined);
      client = undefined;
    },
  };
}
