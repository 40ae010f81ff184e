#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { postgresLedger, sqliteLedger, type Ledger } from '@toolgate/server';
import { ConfigError, isPostgres, readGatewayConfig } from './config.ts';
import { createMcpGateway } from './gateway.ts';
import { serveHttp } from './http-endpoint.ts';

const USAGE = `Usage: toolgate-mcp --config <file.json> [--http <port>]

  --config <file>   the gateway's config (upstreams, ledger, tool policies, approval page)
  --http <port>     serve Streamable HTTP at http://127.0.0.1:<port>/mcp instead of stdio
`;

const say = (line: string) => process.stderr.write(`toolgate-mcp: ${line}\n`);

async function main(): Promise<number> {
  let values: { config?: string; http?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        config: { type: 'string' },
        http: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`toolgate-mcp: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help === true) {
    process.stderr.write(USAGE);
    return 0;
  }
  if (values.config === undefined) {
    process.stderr.write(`toolgate-mcp: --config is required\n${USAGE}`);
    return 2;
  }
  const httpPort = values.http === undefined ? undefined : Number(values.http);
  if (httpPort !== undefined && !(Number.isInteger(httpPort) && httpPort >= 0 && httpPort <= 65_535)) {
    say(`--http takes a port number (got ${JSON.stringify(values.http)})`);
    return 2;
  }

  const file = resolve(values.config);
  let config;
  try {
    config = readGatewayConfig(readFileSync(file, 'utf8'), dirname(file));
  } catch (error) {
    say(
      `cannot use the config ${file}: ${error instanceof ConfigError ? error.message : (error as Error).message}`,
    );
    return 2;
  }

  let ledger: Ledger;
  try {
    ledger = isPostgres(config.ledger)
      ? await postgresLedger({ connectionString: config.ledger })
      : await sqliteLedger({ path: config.ledger });
  } catch (error) {
    say(
      `cannot open the ledger ${isPostgres(config.ledger) ? '(PostgreSQL)' : config.ledger}: ${(error as Error).message}`,
    );
    return 1;
  }

  const gateway = await createMcpGateway({
    upstreams: config.upstreams,
    ledger,
    tools: config.tools,
    approvalPage: config.approvalPage,
    ...(config.principal === undefined ? {} : { principal: config.principal }),
    ...(config.approvers === undefined ? {} : { approvers: config.approvers }),
    ...(config.approvalWaitMs === undefined ? {} : { approvalWaitMs: config.approvalWaitMs }),
    ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
    ...(config.leaseMs === undefined ? {} : { leaseMs: config.leaseMs }),
    ...(config.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: config.connectTimeoutMs }),
    log: say,
  }).catch(async (error: unknown) => {
    await ledger.close();
    throw error;
  });
  say(`approve calls at ${gateway.approvalUrl}`);
  for (const [approver, url] of Object.entries(gateway.approvalUrls))
    if (approver !== gateway.principal) say(`approve calls as ${approver} at ${url}`);

  let stopping: Promise<void> | undefined;
  const stop = (code: number) => {
    stopping ??= (async () => {
      await gateway.close().catch((error: unknown) => say(`while closing: ${(error as Error).message}`));
      await ledger.close().catch(() => undefined);
      process.exit(code);
    })();
    return stopping;
  };
  process.once('SIGINT', () => void stop(130));
  process.once('SIGTERM', () => void stop(143));

  if (httpPort !== undefined) {
    const endpoint = await serveHttp(httpPort, gateway.streamableHttp);
    say(`serving MCP (Streamable HTTP) at ${endpoint.url}`);
    return new Promise<number>(() => undefined);
  }
  const transport = new StdioServerTransport();
  // The client ends the gateway by closing its stdin.
  process.stdin.once('end', () => void stop(0));
  await gateway.server.connect(transport);
  return new Promise<number>(() => undefined);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say((error as Error).stack ?? String(error));
    process.exit(1);
  },
);
