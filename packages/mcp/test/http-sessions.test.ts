import { sqliteLedger } from '@toolgate/server';
import { describe, expect, it } from 'vitest';
import { createMcpGateway } from '../src/index.ts';
import { testUpstream, scratch } from './support/gateway.ts';

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

function post(body: unknown, session?: string): Request {
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }),
    },
    body: JSON.stringify(body),
  });
}

describe('Streamable HTTP sessions', () => {
  it('keeps at most maxHttpSessions, closing the least recently used one for a new client', async () => {
    const dir = scratch();
    const ledger = await sqliteLedger({ path: ':memory:' });
    const gateway = await createMcpGateway({
      upstreams: { test: testUpstream(dir) },
      ledger,
      principal: 'ada',
      maxHttpSessions: 2,
      log: () => undefined,
    });
    try {
      const open = async () => {
        const response = await gateway.streamableHttp(post(initialize));
        expect(response.status).toBe(200);
        await response.text();
        return response.headers.get('mcp-session-id') ?? '';
      };
      const ping = async (session: string) =>
        (await gateway.streamableHttp(post({ jsonrpc: '2.0', id: 2, method: 'ping' }, session))).status;
      const first = await open();
      const second = await open();
      expect(await ping(first)).toBe(200);
      const third = await open();
      // `second` was used least recently: it is the one closed.
      expect(await ping(second)).toBe(404);
      expect(await ping(first)).toBe(200);
      expect(await ping(third)).toBe(200);
    } finally {
      await gateway.close();
      await ledger.close();
    }
  });
});
