import { expect, test, type Page } from '@playwright/test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import type { AxeResults } from 'axe-core';

// The published gateway (the package as built) in front of the published filesystem server, the
// SDK's Client as the MCP client, and the approval page in Chromium.
const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(join(packageRoot, 'package.json'));
const BIN = join(packageRoot, 'dist/bin.js');
const BUILT = join(packageRoot, 'e2e/built-packages.mjs');
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Gateway {
  readonly client: Client;
  readonly approvalUrl: string;
  readonly files: string;
  readonly close: () => Promise<void>;
}

async function startGateway(): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-e2e-'));
  const files = join(dir, 'files');
  mkdirSync(files);
  const config = join(dir, 'toolgate.json');
  writeFileSync(
    config,
    JSON.stringify({
      ledger: 'ledger.db',
      upstreams: { files: { command: process.execPath, args: [FILESYSTEM, files] } },
      principal: 'ada',
      approvalWaitMs: 100,
      tools: { list_allowed_directories: { approval: 'never' } },
    }),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', BUILT, BIN, '--config', config],
    stderr: 'pipe',
  });
  let stderr = '';
  const printed = new Promise<string>((resolve) => {
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const url = /approve calls at (\S+)/.exec(stderr)?.[1];
      if (url !== undefined) resolve(url);
    });
  });
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    approvalUrl: await printed,
    files,
    close: async () => {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** SHA-256 of the RFC 8785 JSON of a flat object of strings: its keys sorted, as JSON writes them. */
function flatInputHash(input: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.entries(input).sort(([a], [b]) => (a < b ? -1 : 1)));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}

// Each test starts the gateway and the filesystem server as real processes: seconds on a busy machine.
test.describe.configure({ timeout: 90_000 });

let gateway: Gateway;
test.beforeEach(async () => {
  gateway = await startGateway();
});
test.afterEach(async () => {
  await gateway?.close();
});

const card = (page: Page, id: string) => page.locator(`article[data-call-id="${id}"]`);

test('a person approves a write_file on the page, seeing the exact input and its hash; it runs once', async ({
  page,
}) => {
  const target = join(gateway.files, 'plan.md');
  const input = { path: target, content: '# Plan\n\n- ship the gateway\n' };
  const ask = () =>
    gateway.client.callTool({
      name: 'write_file',
      arguments: input,
      _meta: { 'toolgate/callId': 'e2e-write-1' },
    });
  const waiting = await ask();
  expect(waiting._meta).toMatchObject({ 'toolgate/status': 'awaiting_approval' });
  expect(existsSync(target)).toBe(false);

  await page.goto(gateway.approvalUrl);
  await expect(page.getByRole('heading', { name: 'Tool calls waiting for you' })).toBeVisible();
  const call = card(page, 'e2e-write-1');
  await expect(call.getByTestId('input')).toHaveText(JSON.stringify(input, null, 2));
  await expect(call.getByTestId('input-hash')).toHaveText(flatInputHash(input));
  await call.getByRole('button', { name: 'Approve' }).click();
  await expect(call.locator('[data-status]')).toHaveAttribute('data-status', 'committed');

  const done = await ask();
  expect(done.isError).toBeFalsy();
  expect(readFileSync(target, 'utf8')).toBe(input.content);
  expect(await ask()).toEqual(done);
  await expect(page.getByRole('heading', { name: /Waiting for a decision \(0\)/ })).toBeVisible();
});

test('a person denies a call on the page: the model is told, and nothing is written', async ({ page }) => {
  const target = join(gateway.files, 'nope.md');
  const input = { path: target, content: 'no' };
  await gateway.client.callTool({
    name: 'write_file',
    arguments: input,
    _meta: { 'toolgate/callId': 'e2e-deny-1' },
  });
  await page.goto(gateway.approvalUrl);
  const call = card(page, 'e2e-deny-1');
  await call.getByRole('button', { name: 'Deny' }).click();
  await expect(call.locator('[data-status]')).toHaveAttribute('data-status', 'cancelled');
  const answer = await gateway.client.callTool({
    name: 'write_file',
    arguments: input,
    _meta: { 'toolgate/callId': 'e2e-deny-1' },
  });
  expect(answer._meta).toMatchObject({
    'toolgate/status': 'cancelled',
    'toolgate/reason': 'approval_denied',
  });
  expect(existsSync(target)).toBe(false);
});

test('a call proposed while the page is open appears live; the page without its token shows nothing', async ({
  page,
}) => {
  await page.goto(gateway.approvalUrl);
  await expect(page.locator('[data-connection="live"]')).toBeVisible();
  void gateway.client.callTool({
    name: 'write_file',
    arguments: { path: join(gateway.files, 'live.md'), content: 'x' },
    _meta: { 'toolgate/callId': 'e2e-live-1' },
  });
  await expect(card(page, 'e2e-live-1').getByRole('button', { name: 'Approve' })).toBeVisible();

  const bare = new URL(gateway.approvalUrl);
  bare.search = '';
  const response = await page.goto(bare.href);
  expect(response?.status()).toBe(401);
  await expect(page.locator('body')).toContainText('needs its token');
});

for (const colorScheme of ['light', 'dark'] as const) {
  test(`axe finds no violations on the page (${colorScheme}): a call waiting, one done`, async ({ page }) => {
    await page.emulateMedia({ colorScheme });
    await gateway.client.callTool({
      name: 'list_allowed_directories',
      arguments: {},
      _meta: { 'toolgate/callId': 'a11y-0' },
    });
    await gateway.client.callTool({
      name: 'write_file',
      arguments: { path: join(gateway.files, 'a.md'), content: 'a' },
      _meta: { 'toolgate/callId': 'a11y-1' },
    });
    await page.goto(gateway.approvalUrl);
    await expect(card(page, 'a11y-1').getByRole('button', { name: 'Approve' })).toBeVisible();
    // Evaluated through the DevTools protocol: the page's CSP allows no inline script, rightly.
    await page.evaluate(AXE);
    const results = await page.evaluate(() =>
      (window as unknown as { axe: { run: (context: Document) => Promise<AxeResults> } }).axe.run(document),
    );
    expect(
      results.violations.flatMap((violation) =>
        violation.nodes.map(
          (node) => `${violation.id} ${node.target.join(' ')}: ${node.failureSummary ?? ''}`,
        ),
      ),
    ).toEqual([]);
  });
}
