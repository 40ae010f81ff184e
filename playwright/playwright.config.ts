import { defineConfig } from '@playwright/test';

/** The production build of the playground, served on loopback only, on a port the dev server does not use. */
const PORT = 4178;

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
    command: `node_modules/.bin/vite build --logLevel warn && node_modules/.bin/vite preview --port ${PORT}`,
    cwd: '../examples/playground',
    url: `http://127.0.0.1:${PORT}`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
  projects: [
    { name: 'playground', testIgnore: /flood\.spec\.ts/ },
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
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
    trace: 'retain-on-failure',
  },
});
