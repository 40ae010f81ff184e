import { defineConfig } from '@playwright/test';

/** The AI SDK example in Chromium: each spec starts its own server (built page, scripted model, its own ledger). */
export default defineConfig({
  testDir: '.',
  testMatch: /\.spec\.ts$/,
  outputDir: './artifacts/results',
  fullyParallel: true,
  workers: 2,
  forbidOnly: true,
  retries: 0,
  // Each test starts a server process (Vite's module runner loads its TypeScript): seconds on a busy machine.
  timeout: 90_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  globalSetup: './global-setup.ts',
  use: {
    browserName: 'chromium',
    headless: true,
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
