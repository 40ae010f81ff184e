import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, inject } from 'vitest';
import type { StdioUpstream } from '../../src/index.ts';

export const UPSTREAM = fileURLToPath(new URL('./upstream-server.mjs', import.meta.url));

/** A test's own folder, removed after the test. */
export function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What a test's gateway is started with. */
export interface GatewayStart {
  /** The config file's content; `ledger` defaults to a file in the test's folder. */
  readonly config: Record<string, unknown>;
  /** Serve the client over Streamable HTTP instead of stdio. */
  readonly http?: boolean;
  /** Answers the gateway's elicitations (the client then declares the capability). */
  readonly elicit?: (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>;
  readonly dir?: string;
}

/** The gateway as a test sees it: a real process, and the SDK's Client connected to it. */
export interface RunningGateway {
  readonly client: Client;
  /** The approval page's link with its token, as printed on stderr. */
  readonly approvalUrl: string;
  readonly dir: string;
  readonly configFile: string;
  /** Everything the gateway printed on stderr so far. */
  readonly stderr: () => string;
  /** The lines the test upstream logged (one per run of a tool with an effect). */
  readonly upstreamLog: () => string[];
  readonly pid: () => number | null;
  readonly close: () => Promise<void>;
}

/** The test upstream as a stdio upstream of the config, logging into `dir`. */
export function testUpstream(dir: string, env: Record<string, string> = {}): StdioUpstream {
  return {
    command: process.execPath,
    args: [UPSTREAM],
    env: { UPSTREAM_LOG: join(dir, 'upstream.log'), ...env },
  };
}

/** Starts `toolgate-mcp --config <file>` as a child process and connects the SDK's Client to it. */
export async function startGateway(start: GatewayStart): Promise<RunningGateway> {
  const dir = start.dir ?? scratch();
  const configFile = join(dir, 'toolgate.json');
  writeFileSync(configFile, JSON.stringify({ ledger: 'ledger.db', ...start.config }, null, 2));
  const bin = inject('gatewayBin');
  const client = new Client(
    { name: 'toolgate-test', version: '1.0.0' },
    { capabilities: start.elicit === undefined ? {} : { elicitation: {} } },
  );
  if (start.elicit !== undefined) {
    const elicit = start.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request));
  }
  let stderr = '';
  let pid: () => number | null;
  let stop: () => Promise<void>;
  let approvalUrl: string;
  if (start.http === true) {
    const child = spawn(process.execPath, [bin, '--config', configFile, '--http', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = createInterface({ input: child.stderr });
    const found = { approval: '', mcp: '' };
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) =>
        reject(new Error(`the gateway exited (${code}) before it served HTTP:\n${stderr}`)),
      );
      lines.on('line', (line) => {
        found.approval ||= /approve calls at (\S+)/.exec(line)?.[1] ?? '';
        found.mcp ||= /Streamable HTTP\) at (\S+)/.exec(line)?.[1] ?? '';
        if (found.approval !== '' && found.mcp !== '') resolve();
      });
    });
    approvalUrl = found.approval;
    await client.connect(new StreamableHTTPClientTransport(new URL(found.mcp)));
    pid = () => child.pid ?? null;
    stop = async () => {
      await client.close().catch(() => undefined);
      await ended(child);
    };
  } else {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, '--config', configFile],
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await client.connect(transport);
    approvalUrl = await waitFor(() => /approve calls at (\S+)/.exec(stderr)?.[1]);
    pid = () => transport.pid;
    stop = () => client.close().catch(() => undefined);
  }
  const gateway: RunningGateway = {
    client,
    approvalUrl,
    dir,
    configFile,
    stderr: () => stderr,
    upstreamLog: () => {
      try {
        return readFileSync(join(dir, 'upstream.log'), 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
    pid: () => pid(),
    close: stop,
  };
  cleanups.push(() => gateway.close());
  return gateway;
}

function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * Polls `read` until it answers a value: for what another process writes (a log line, stderr),
 * where there is no event to await.
 */
export async function waitFor<T>(
  read: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error('waitFor: timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The first text block of a tool result. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.find((part) => part.type === 'text')?.text ?? '';
}
