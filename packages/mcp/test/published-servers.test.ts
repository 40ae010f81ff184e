import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, inject, it } from 'vitest';
import { startGateway, scratch, textOf } from './support/gateway.ts';
import { approveOnPage, pageCalls } from './support/page-api.ts';

const require = createRequire(import.meta.url);
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const EVERYTHING = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);
const INSPECTOR = join(dirname(require.resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build');

/** The same server, connected to directly with the SDK's Client, to compare with what the gateway passes on. */
async function direct(args: string[]): Promise<Client> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  return client;
}

describe('@modelcontextprotocol/server-filesystem behind the gateway', () => {
  it('refuses a write_file until a person approves it on the page, then runs it once; reads run without approval', async () => {
    const dir = scratch();
    const files = join(dir, 'files');
    mkdirSync(files);
    writeFileSync(join(files, 'hello.txt'), 'hello');
    const gw = await startGateway({
      dir,
      config: {
        upstreams: { files: { command: process.execPath, args: [FILESYSTEM, files] } },
        tools: { read_text_file: { approval: 'never' }, list_directory: { approval: 'never' } },
        principal: 'ada',
        approvalWaitMs: 200,
      },
    });
    expect(
      textOf(
        await gw.client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'hello.txt') } }),
      ),
    ).toBe('hello');

    const target = join(files, 'plan.md');
    const write = { path: target, content: '# plan\n' };
    const ask = () =>
      gw.client.callTool({ name: 'write_file', arguments: write, _meta: { 'toolgate/callId': 'fs-1' } });
    expect((await ask())._meta).toMatchObject({ 'toolgate/status': 'awaiting_approval' });
    expect(existsSync(target)).toBe(false);

    const outside = await gw.client.callTool({
      name: 'write_file',
      arguments: { path: join(files, 'x.md') },
    });
    expect(outside._meta).toMatchObject({
      'toolgate/status': 'rejected',
      'toolgate/reason': 'invalid_arguments',
    });

    const shown = (await pageCalls(gw.approvalUrl, 'mcp:ada')).find((call) => call.id === 'fs-1');
    expect(shown?.input).toEqual(write);
    expect((await approveOnPage(gw.approvalUrl, 'fs-1', shown?.input)).status).toBe(200);
    const done = await ask();
    expect(done.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('# plan\n');
    expect(await ask()).toEqual(done);
  });
});

describe('@modelcontextprotocol/server-everything behind the gateway', () => {
  it('lists its tools exactly as it lists them itself, and answers its results unchanged', async () => {
    const dir = scratch();
    const own = await direct([EVERYTHING]);
    try {
      const gw = await startGateway({
        dir,
        config: {
          upstreams: { everything: { command: process.execPath, args: [EVERYTHING] } },
          tools: {
            'get-tiny-image': { approval: 'never' },
            'get-resource-links': { approval: 'never' },
            'get-structured-content': { approval: 'never' },
          },
        },
      });
      expect((await gw.client.listTools()).tools).toEqual((await own.listTools()).tools);
      for (const [name, args] of [
        ['get-tiny-image', {}],
        ['get-resource-links', { count: 3 }],
        ['get-structured-content', { location: 'New York' }],
      ] as const) {
        const through = await gw.client.callTool({ name, arguments: args });
        const { _meta, ...rest } = through;
        expect(rest).toEqual(await own.callTool({ name, arguments: args }));
        expect(_meta).toMatchObject({ 'toolgate/status': 'committed' });
      }
    } finally {
      await own.close();
    }
  });
});

describe("a spawned upstream's environment", () => {
  it("has the variables its config names, and not the rest of the gateway's environment", async () => {
    const dir = scratch();
    process.env['TOOLGATE_TEST_NOT_FOR_UPSTREAMS'] = 'secret';
    try {
      const gw = await startGateway({
        dir,
        config: {
          upstreams: {
            everything: { command: process.execPath, args: [EVERYTHING], env: { TICKETS_TOKEN: 't-123' } },
          },
          tools: { 'get-env': { approval: 'never' } },
        },
      });
      const env = JSON.parse(textOf(await gw.client.callTool({ name: 'get-env', arguments: {} }))) as Record<
        string,
        string
      >;
      expect(env['TICKETS_TOKEN']).toBe('t-123');
      expect(env['PATH']).toBe(process.env['PATH']);
      expect(env['TOOLGATE_TEST_NOT_FOR_UPSTREAMS']).toBeUndefined();
    } finally {
      delete process.env['TOOLGATE_TEST_NOT_FOR_UPSTREAMS'];
    }
  });
});

describe('the MCP Inspector CLI', () => {
  it("lists the gateway's tools, started from a Claude-Desktop-style config", async () => {
    const dir = scratch();
    const config = join(dir, 'toolgate.json');
    writeFileSync(
      config,
      JSON.stringify({
        ledger: 'ledger.db',
        upstreams: { everything: { command: process.execPath, args: [EVERYTHING] } },
      }),
    );
    const clients = join(dir, 'claude_desktop_config.json');
    writeFileSync(
      clients,
      JSON.stringify({
        mcpServers: {
          toolgate: { command: process.execPath, args: [inject('gatewayBin'), '--config', config] },
        },
      }),
    );
    const run = spawnSync(
      process.execPath,
      ['cli.js', '--config', clients, '--server', 'toolgate', '--cli', '--method', 'tools/list'],
      { cwd: INSPECTOR, encoding: 'utf8', timeout: 50_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const listed = JSON.parse(run.stdout) as { tools: { name: string }[] };
    expect(listed.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image']),
    );
  }, 60_000);
});
