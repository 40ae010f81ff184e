import { defineConfig } from '@playwright/test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The playground's own server in production mode (the built page), on loopback only, on a port the dev server does not use (TOOLGATE_E2E_PORT moves it, so two checkouts can run the suite at once). */
const PORT = Number(process.env.TOOLGATE_E2E_PORT ?? 4178);
// A ledger of its own for every run, so that runs never meet.
const LEDGER = join(mkdtempSync(join(tmpdir(), 'toolgate-e2e-')), 'playground.db');

export default defineConfig({
  testDir: './specs',
  outputDir: './artifacts/results',
  fullyParallel: true,
  workers: 2,
  forbidOnly: true,
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  globalSetup: './global-setup.ts',
  webServer: {
    command: `node_modules/.bin/vite build --logLevel warn && node server.mjs --production`,
    cwd: '../examples/playground',
    url: `http://127.0.0.1:${PORT}`,
    env: { PORT: String(PORT), PLAYGROUND_LEDGER: LEDGER, PLAYGROUND_TEST_HOOKS: '1' },
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
  projects: [
    { name: 'playground', testIgnore: /flood\.spec\.ts/ },
    // @toolgate/mcp's approval page: each spec starts the built gateway itself.
    { name: 'mcp', testDir: '../packages/mcp/e2e' },
    // @toolgate/server's approval link pages: each spec file starts an app server of its own.
    { name: 'server', testDir: '../packages/server/e2e' },
    // @toolgate/channels: the link in a mail the gate sent, followed in Chromium.
    { name: 'channels', testDir: '../packages/channels/e2e' },
    // @toolgate/react's stylesheet in a Vite production build of an app of its own.
    { name: 'react', testDir: '../packages/react/e2e' },
    // The flood measures main-thread tasks, so it runs alone, after the rest, with both cores to itself.
    { name: 'flood', testMatch: /flood\.spec\.ts/, dependencies: ['playground'] },
  ],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1440, height: 900 },
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
    trace: 'retain-on-failure',
  },
});
