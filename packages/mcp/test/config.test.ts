import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { ConfigError, readGatewayConfig } from '../src/index.ts';
import { scratch } from './support/gateway.ts';

const read = (config: unknown) => readGatewayConfig(JSON.stringify(config), '/home/me/toolgate');
const files = {
  files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/notes'] },
};

describe('the config file', () => {
  it("takes relative paths from the config file's folder, and keeps a PostgreSQL URL as it is", () => {
    expect(read({ upstreams: { ...files, remote: { url: 'http://127.0.0.1:9000/mcp' } } })).toEqual({
      ledger: '/home/me/toolgate/toolgate-mcp.db',
      upstreams: { ...files, remote: { url: 'http://127.0.0.1:9000/mcp' } },
      tools: {},
      approvalPage: { port: 0 },
    });
    expect(
      read({ ledger: 'data/audit.db', upstreams: { a: { command: 'node', cwd: 'servers' } } }),
    ).toMatchObject({
      ledger: '/home/me/toolgate/data/audit.db',
      upstreams: { a: { command: 'node', cwd: '/home/me/toolgate/servers' } },
    });
    expect(read({ ledger: 'postgres://db.internal/toolgate', upstreams: files }).ledger).toBe(
      'postgres://db.internal/toolgate',
    );
  });

  it.each([
    [
      { upstreams: files, tools: { write_file: { aproval: 'never' } } },
      '"tools.write_file" has an unknown key "aproval" (known: approval, timeoutMs)',
    ],
    [
      { upstreams: files, tools: { write_file: { approval: 'sometimes' } } },
      '"tools.write_file.approval" must be "always" or "never" (got "sometimes")',
    ],
    [{ upstreams: {} }, '"upstreams" names no server'],
    [
      { upstreams: files, approvalPage: { port: 70_000 } },
      '"approvalPage.port" must be a port number from 0 (any free port) to 65535',
    ],
    [{ upstreams: files, ledgr: 'x.db' }, 'the config has an unknown key "ledgr"'],
    [
      { upstreams: files, approvers: ['bob', 'bob'] },
      '"approvers" must be a list of distinct names (each 1 to 128 printable characters), e.g. ["bob", "carol"]',
    ],
    [
      { upstreams: files, approvers: 'bob' },
      '"approvers" must be a list of distinct names (each 1 to 128 printable characters), e.g. ["bob", "carol"]',
    ],
    [
      { upstreams: { 'bad name': files.files } },
      'upstream name "bad name" must be 1 to 64 letters, digits, "_" or "-"',
    ],
    [
      { upstreams: { a: { command: 'node', args: 'server.js' } } },
      '"upstreams.a.args" must be an array of strings',
    ],
    [
      { upstreams: { a: { url: 'ftp://example.com' } } },
      '"upstreams.a.url" must be an http:// or https:// URL',
    ],
    [{ upstreams: { a: {} } }, '"upstreams.a" needs a "command" to spawn (or a "url" to reach)'],
    [{ upstreams: files, timeoutMs: 0 }, '"timeoutMs" must be a number of milliseconds above 0'],
  ])('refuses %j: %s', (config, message) => {
    expect(() => read(config)).toThrow(ConfigError);
    expect(() => read(config)).toThrow(message);
  });

  it('refuses text that is not JSON', () => {
    expect(() => readGatewayConfig('{ "upstreams": ', '/')).toThrow('the config is not JSON');
  });

  it('stops the bin with exit code 2 and the reason on stderr, before starting anything', () => {
    const dir = scratch();
    const config = join(dir, 'toolgate.json');
    writeFileSync(config, JSON.stringify({ upstreams: files, tools: { write_file: { approval: 'nevr' } } }));
    const run = spawnSync(process.execPath, [inject('gatewayBin'), '--config', config], {
      encoding: 'utf8',
      input: '',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(
      `toolgate-mcp: cannot use the config ${config}: "tools.write_file.approval" must be "always" or "never" (got "nevr")`,
    );
    const usage = spawnSync(process.execPath, [inject('gatewayBin')], { encoding: 'utf8', input: '' });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('Usage: toolgate-mcp --config <file.json> [--http <port>]');
  });
});
