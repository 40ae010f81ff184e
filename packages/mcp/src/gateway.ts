import { userInfo } from 'node:os';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { createServerGate, type Ledger, type ServerGate } from '@toolgate/server';
import { startApprovalPage, type ApprovalPage } from './approval-page.ts';
import { catalogOf, listEntries, type GatewayTool } from './catalog.ts';
import { createHttpSessions } from './http-sessions.ts';
import type { ToolPolicy, UpstreamSpec } from './config.ts';
import { SameAsks } from './same-asks.ts';
import { answerToolCall, type CallContext } from './tool-call.ts';
import { connectUpstream, type Upstream } from './upstream.ts';

/**
 * What {@link createMcpGateway} takes.
 *
 * @example
 * const options: McpGatewayOptions = {
 *   upstreams: { files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/notes'] } },
 *   ledger: await sqliteLedger({ path: './toolgate.db' }),
 *   tools: { read_text_file: { approval: 'never' } },
 * };
 */
export interface McpGatewayOptions {
  readonly upstreams: Readonly<Record<string, UpstreamSpec>>;
  readonly ledger: Ledger;
  /** Whose calls these are and who approves them (default: the user running the gateway). */
  readonly principal?: string;
  /** More people who may approve, each with a page link of their own (`approvalUrls`), so the ledger names who decided. */
  readonly approvers?: readonly string[];
  /** Per tool (by the name the client sees): `approval: "never"` lets it run without a person. */
  readonly tools?: Readonly<Record<string, ToolPolicy>>;
  /** The approval page on 127.0.0.1 (default: any free port). */
  readonly approvalPage?: { readonly port?: number; readonly assets?: string };
  /** How long a `tools/call` from a client without elicitation waits for a decision before answering where to approve (default 10 s). */
  readonly approvalWaitMs?: number;
  /** How long the client's approval dialog may stay open (default 10 minutes). */
  readonly elicitationTimeoutMs?: number;
  /** How long an upstream may take on a call before it is cancelled (default 5 minutes). */
  readonly timeoutMs?: number;
  /** The largest message or result taken from an upstream, in bytes (default 16 MiB). */
  readonly maxResultBytes?: number;
  /** Where the gateway's own lines go (default: stderr; stdout carries the protocol). */
  readonly log?: (line: string) => void;
  /** How long a running call's claim lasts unrenewed; after a crash the call is settled once it ran out (default 30 s). */
  readonly leaseMs?: number;
  /** How long to wait for each upstream's first connection (default 20 s). */
  readonly connectTimeoutMs?: number;
  /** Client sessions kept open over Streamable HTTP; past this, the least recently used one is closed (default 256). */
  readonly maxHttpSessions?: number;
  /** Waits between reconnection attempts to an upstream (default 0.5 s doubling to 30 s). */
  readonly retryMs?: (attempt: number) => number;
}

/**
 * A running gateway.
 *
 * @example
 * const gateway = await createMcpGateway(options);
 * await gateway.server.connect(new StdioServerTransport());
 */
export interface McpGateway {
  /** The MCP server a client talks to: connect it to one transport (stdio, say). */
  readonly server: Server;
  /** Makes another MCP server over the same gateway, for one more client connection. */
  readonly newServer: () => Server;
  /** Streamable HTTP (`POST`/`GET`/`DELETE`), one MCP session per client: mount it at `/mcp`. */
  readonly streamableHttp: (request: Request) => Promise<Response>;
  /** The approval page's link, with its token: the principal's. */
  readonly approvalUrl: string;
  /** Each approver's own link to the page (the principal's too): a decision made there is recorded as theirs. */
  readonly approvalUrls: Readonly<Record<string, string>>;
  /** The server gate that decides every call (its ledger is the audit trail). */
  readonly gate: ServerGate;
  /** The session the gateway's calls are in. */
  readonly session: string;
  readonly principal: string;
  /** Closes client sessions, the approval page, the upstreams and the gate (not the ledger). */
  readonly close: () => Promise<void>;
}

/**
 * Puts toolgate in front of MCP servers: one MCP server for the client, offering the upstreams'
 * tools as they list them; each call validated against the upstream's own input schema, approved
 * by a person (unless `"never"`), run at most once per call id, and recorded in the ledger.
 *
 * @example
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 * import { createMcpGateway } from '@toolgate/mcp';
 * import { sqliteLedger } from '@toolgate/server';
 *
 * const gateway = await createMcpGateway({
 *   upstreams: { files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/notes'] } },
 *   ledger: await sqliteLedger({ path: './toolgate.db' }),
 *   tools: { read_text_file: { approval: 'never' } },
 * });
 * console.error(`Approve calls at ${gateway.approvalUrl}`);
 * await gateway.server.connect(new StdioServerTransport());
 */
export async function createMcpGateway(options: McpGatewayOptions): Promise<McpGateway> {
  const log = options.log ?? ((line: string) => process.stderr.write(`toolgate-mcp: ${line}\n`));
  const principal = options.principal ?? defaultPrincipal();
  const session = `mcp:${principal}`;
  const approvers = [principal, ...(options.approvers ?? []).filter((name) => name !== principal)];
  const policies = options.tools ?? {};
  const timeoutMs = options.timeoutMs ?? 300_000;
  const maxResultBytes = options.maxResultBytes ?? 16 * 1024 * 1024;

  const watchers = new Map<string, Set<(progress: Progress) => void>>();
  const progress = (callId: string, update: Progress) => {
    for (const send of watchers.get(callId) ?? []) send(update);
  };
  const watch = (callId: string, send: (update: Progress) => void) => {
    let set = watchers.get(callId);
    if (set === undefined) watchers.set(callId, (set = new Set()));
    set.add(send);
    return () => {
      set.delete(send);
      if (set.size === 0 && watchers.get(callId) === set) watchers.delete(callId);
    };
  };

  const upstreamErrors = keptUpstreamErrors();
  const upstreamError = upstreamErrors.keep;

  const servers = new Set<Server>();
  let tools: readonly GatewayTool[] = [];
  let started = false;
  const refresh = () => {
    tools = catalogOf(upstreams, { policies, timeoutMs, progress, upstreamError });
    for (const tool of tools)
      if (tool.broken !== undefined) log(`the tool "${tool.name}" is not offered: ${tool.broken}`);
    if (!started) return;
    // Later calls are checked against the new schemas; calls already proposed keep the tool they were proposed with.
    gate.replaceTools(tools.map((tool) => tool.definition));
    for (const server of servers)
      if (server.transport !== undefined) server.sendToolListChanged().catch(() => undefined);
  };
  const upstreams: Upstream[] = Object.entries(options.upstreams).map(([name, spec]) =>
    connectUpstream(
      name,
      spec,
      { onTools: () => started && refresh(), log },
      {
        maxMessageBytes: maxResultBytes,
        ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
        ...(options.retryMs === undefined ? {} : { retryMs: options.retryMs }),
      },
    ),
  );
  if (upstreams.length === 0) throw new TypeError('createMcpGateway: `upstreams` names no server.');
  await Promise.all(upstreams.map((upstream) => upstream.ready));
  refresh();
  for (const name of Object.keys(policies))
    if (!tools.some((tool) => tool.name === name))
      log(`the config sets a policy for "${name}", which no upstream offers (yet)`);

  const gate = createServerGate({
    tools: tools.map((tool) => tool.definition),
    ledger: options.ledger,
    // The gateway's session holds the calls its clients ask (each as `<principal> via <client>`)
    // and the person it acts for sees and decides them: on the page, or in a client's dialog.
    canSee: (_principal, seen) => seen.id === session,
    canApprove: (approver, call) => approvers.includes(approver) && call.session === session,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    onError: (error) => log(`ledger: ${(error as Error).message ?? String(error)}`),
  });
  let page: ApprovalPage;
  try {
    page = await startApprovalPage({
      gate: () => gate,
      session,
      approvers,
      port: options.approvalPage?.port ?? 0,
      ...(options.approvalPage?.assets === undefined ? {} : { assets: options.approvalPage.assets }),
      onError: (error) => log(`approval page: ${(error as Error).message ?? String(error)}`),
    });
  } catch (error) {
    await gate.close();
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    throw error;
  }
  started = true;

  const context: CallContext = {
    gate: () => gate,
    session,
    principal,
    pageUrl: page.origin,
    // Until this answer the person may not know where to approve (the link is on stderr, which
    // clients hide in a log); the model is told it here. Asking again with the same arguments
    // joins the call, so a short wait costs nothing.
    approvalWaitMs: options.approvalWaitMs ?? 10_000,
    elicitationTimeoutMs: options.elicitationTimeoutMs ?? 600_000,
    upstreamOf: (name) => tools.find((tool) => tool.name === name)?.upstream.name,
    upstreamError: upstreamErrors.get,
    watch,
    log,
  };

  const newServer = (): Server => {
    const server = new Server(
      { name: 'toolgate-mcp', version: '0.1.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listEntries(tools) }));
    const asks = new SameAsks();
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      answerToolCall(context, server, request, extra, asks),
    );
    servers.add(server);
    const onclose = server.onclose;
    server.onclose = () => {
      servers.delete(server);
      onclose?.();
    };
    return server;
  };

  const http = createHttpSessions(newServer, options.maxHttpSessions ?? 256);

  const server = newServer();
  let closed: Promise<void> | undefined;
  return {
    server,
    newServer,
    streamableHttp: http.handle,
    approvalUrl: page.urls[principal] ?? '',
    approvalUrls: page.urls,
    gate,
    session,
    principal,
    close: () =>
      (closed ??= (async () => {
        await http.close();
        for (const each of servers) await each.close().catch(() => undefined);
        await page.close();
        await gate.close();
        await Promise.all(upstreams.map((upstream) => upstream.close()));
      })()),
  };
}

/** How many upstream `isError` results are kept for their calls' answers. */
const KEPT_UPSTREAM_ERRORS = 64;

/**
 * An upstream's `isError` result is not in the ledger (a failed call keeps only its reason): it is
 * kept here for the requests answering that call, the most recent ones only.
 */
function keptUpstreamErrors() {
  const kept = new Map<string, Record<string, unknown>>();
  return {
    keep: (callId: string, result: Record<string, unknown>) => {
      kept.delete(callId);
      kept.set(callId, result);
      for (const oldest of kept.keys()) {
        if (kept.size <= KEPT_UPSTREAM_ERRORS) break;
        kept.delete(oldest);
      }
    },
    get: (callId: string) => kept.get(callId),
  };
}

function defaultPrincipal(): string {
  try {
    return userInfo().username || 'local';
  } catch {
    return 'local';
  }
}
