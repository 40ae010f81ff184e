import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

/** Streamable HTTP for many clients: one MCP server and transport per session. */
export interface HttpSessions {
  readonly handle: (request: Request) => Promise<Response>;
  readonly close: () => Promise<void>;
}

/**
 * Answers Streamable HTTP requests, each client in a session of its own (an SDK transport and a
 * server from `newServer`). At most `max` sessions stay open: a new client closes the least
 * recently used one, so clients that reconnect without closing cannot lock others out.
 */
export function createHttpSessions(newServer: () => Server, max: number): HttpSessions {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return {
    async handle(request) {
      const id = request.headers.get('mcp-session-id');
      if (id !== null) {
        const transport = sessions.get(id);
        if (transport === undefined) return jsonRpcError(404, -32001, 'Session not found: initialize again.');
        // Most recently used last, so the first entry is the one to close.
        sessions.delete(id);
        sessions.set(id, transport);
        return transport.handleRequest(request);
      }
      if (request.method !== 'POST')
        return jsonRpcError(400, -32000, 'Bad Request: no session; send initialize first.');
      if (sessions.size >= max) {
        const [oldest, stale] = sessions.entries().next().value as [
          string,
          WebStandardStreamableHTTPServerTransport,
        ];
        sessions.delete(oldest);
        await stale.close().catch(() => undefined);
      }
      const transport: WebStandardStreamableHTTPServerTransport =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
          onsessionclosed: (sessionId) => void sessions.delete(sessionId),
          maxRequestBodySize: 4 * 1024 * 1024,
        });
      transport.onclose = () => {
        if (transport.sessionId !== undefined && sessions.get(transport.sessionId) === transport)
          sessions.delete(transport.sessionId);
      };
      await newServer().connect(transport);
      const response = await transport.handleRequest(request);
      // A first request that did not initialize leaves no session behind.
      if (transport.sessionId === undefined) await transport.close();
      return response;
    },
    async close() {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      sessions.clear();
    },
  };
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}
