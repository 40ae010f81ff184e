import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { scratch, waitFor } from './support/gateway.ts';
import { approveOnPage, pageCalls } from './support/page-api.ts';

const require = createRequire(import.meta.url);
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const INSPECTOR = realpathSync(dirname(require.resolve('@modelcontextprotocol/inspector/package.json')));
const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The README's Inspector commands, as a reader copies them. */
const commands = README.split('\n').filter((line) => line.startsWith('npx @modelcontextprotocol/inspector '));

/**
 * A folder where `npx` finds both packages without the registry, as after `npm install
 * @toolgate/mcp @modelcontextprotocol/inspector`: the Inspector as published, and `toolgate-mcp`
 * as the gateway's bin.
 */
function project(): string {
  const dir = scratch();
  mkdirSync(join(dir, 'node_modules/@modelcontextprotocol'), { recursive: true });
  mkdirSync(join(dir, 'node_modules/.bin'));
  symlinkSync(INSPECTOR, join(dir, 'node_modules/@modelcontextprotocol/inspector'));
  const manifest = JSON.parse(readFileSync(join(INSPECTOR, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  for (const [name, file] of Object.entries(manifest.bin))
    symlinkSync(join(INSPECTOR, file), join(dir, 'node_modules/.bin', name));
  const gateway = inject('gatewayBin');
  chmodSync(gateway, 0o755);
  symlinkSync(gateway, join(dir, 'node_modules/.bin/toolgate-mcp'));
  return dir;
}

/** Runs a command line as a shell would, in `cwd`; npm may not reach the registry. */
function shell(line: string, cwd: string) {
  return spawnSync('sh', ['-c', line], {
    cwd,
    encoding: 'utf8',
    timeout: 50_000,
    env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
  });
}

describe("the README's MCP Inspector commands", () => {
  it('list and call the tools through the gateway, showing the approval page link on stderr', () => {
    expect(commands).toHaveLength(2);
    const cwd = project();
    const notes = join(cwd, 'notes');
    mkdirSync(notes);
    writeFileSync(join(notes, 'todo.md'), 'water the plants');
    const config = join(cwd, 'toolgate.json');
    writeFileSync(
      config,
      JSON.stringify({
        ledger: 'toolgate.db',
        upstreams: { files: { command: process.execPath, args: [FILESYSTEM, notes] } },
        tools: { read_text_file: { approval: 'never' }, list_directory: { approval: 'never' } },
      }),
    );
    const ours = (line: string) =>
      line.replaceAll('~/toolgate/toolgate.json', config).replaceAll('/home/me/notes', notes);

    const [list = '', call = ''] = commands;
    const listed = shell(ours(list), cwd);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stderr).toMatch(/toolgate-mcp: approve calls at http:\/\/127\.0\.0\.1:\d+\/\?token=/);
    const { tools } = JSON.parse(listed.stdout) as { tools: { name: string }[] };
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['read_text_file', 'write_file']));

    const called = shell(ours(call), cwd);
    expect(called.status, called.stderr).toBe(0);
    expect(JSON.parse(called.stdout)).toMatchObject({
      content: [{ type: 'text', text: 'water the plants' }],
      _meta: { 'toolgate/status': 'committed' },
    });

    // Without `--`, the Inspector reads the gateway's --config as its own.
    const without = shell(ours(list).replace(' -- ', ' '), cwd);
    expect(without.status).not.toBe(0);
    expect(without.stdout + without.stderr).toContain('--config');
  }, 120_000);

  it('asks for the outcome of a call that waited, by its id, in a new run where the person approves it', async () => {
    const cwd = project();
    const notes = join(cwd, 'notes');
    mkdirSync(notes);
    const config = join(cwd, 'toolgate.json');
    const write = (approvalWaitMs: number) =>
      writeFileSync(
        config,
        JSON.stringify({
          ledger: 'toolgate.db',
          principal: 'ada',
          approvalWaitMs,
          upstreams: { files: { command: process.execPath, args: [FILESYSTEM, notes] } },
        }),
      );
    const plan = join(notes, 'plan.md');
    const gateway = `-- npx toolgate-mcp --config ${config}`;
    const call = `npx @modelcontextprotocol/inspector --cli --method tools/call --tool-name write_file --tool-arg path=${plan} --tool-arg content=hello`;

    write(100);
    const first = shell(`${call} ${gateway}`, cwd);
    // The CLI exits with an error for an isError answer, and prints it.
    expect(first.status).not.toBe(0);
    const told = JSON.parse(first.stdout) as { _meta: Record<string, string> };
    expect(told._meta['toolgate/status']).toBe('awaiting_approval');
    const id = told._meta['toolgate/callId'] ?? '';

    write(60_000);
    const again = spawn('sh', ['-c', `${call} --tool-metadata toolgate/callId=${id} ${gateway}`], {
      cwd,
      env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
      // A group of its own, so that a failed test ends the Inspector and the gateway under the shell too.
      detached: true,
    });
    onTestFinished(() => {
      if (again.exitCode === null && again.pid !== undefined) process.kill(-again.pid, 'SIGTERM');
    });
    let out = '';
    let err = '';
    again.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    again.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => again.once('exit', resolve));
    const link = await waitFor(() => /approve calls at (\S+)/.exec(err)?.[1], 50_000);
    const [waiting] = await pageCalls(link, 'mcp:ada');
    expect(waiting).toMatchObject({ id, status: 'awaiting_approval' });
    expect((await approveOnPage(link, id, waiting?.input)).status).toBe(200);
    expect(await exited, err).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      _meta: { 'toolgate/callId': id, 'toolgate/status': 'committed' },
    });
    expect(readFileSync(plan, 'utf8')).toBe('hello');
  }, 120_000);
});
