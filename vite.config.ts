import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Property tests run hundreds of generated cases; on a loaded machine that can take longer than
// Vitest's 5 s default. No test asserts by the clock (fake clocks do that), so a longer limit
// hides nothing: it only keeps a busy machine from failing a test that would pass.
const PROPERTY_TIMEOUT_MS = 30_000;

// @toolgate/react's tests run twice: on React 19 (its own devDependencies) and on React 18, from a
// directory dependency that resolves React 18 and the Testing Library against each other.
const react18 = realpathSync(
  fileURLToPath(new URL('./packages/react/node_modules/@toolgate/react-18-env/', import.meta.url)),
);
const reactTests = {
  root: './packages/react',
  include: ['test/**/*.test.{ts,tsx}'],
  environment: 'jsdom',
  setupFiles: ['./test/setup.ts'],
  testTimeout: PROPERTY_TIMEOUT_MS,
};

// One Vitest run for the whole workspace; each package is a project.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'core',
          root: './packages/core',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          testTimeout: PROPERTY_TIMEOUT_MS,
          typecheck: {
            enabled: true,
            include: ['test/**/*.test-d.ts'],
            tsconfig: './tsconfig.test-d.json',
          },
        },
      },
      {
        test: {
          name: 'react',
          ...reactTests,
          typecheck: {
            enabled: true,
            include: ['test/**/*.test-d.ts'],
            tsconfig: './tsconfig.test-d.json',
          },
        },
      },
      {
        test: {
          name: 'server',
          root: './packages/server',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          // Some tests start real processes or a PostgreSQL database, which takes seconds on a busy machine.
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'ai-sdk',
          root: './packages/ai-sdk',
          include: ['test/**/*.test.{ts,tsx}'],
          environment: 'node',
          testTimeout: 20_000,
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
        },
      },
      {
        test: {
          name: 'openai-agents',
          root: './packages/openai-agents',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'channels',
          root: './packages/channels',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'ai-sdk-chat',
          root: './examples/ai-sdk-chat',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'mcp',
          root: './packages/mcp',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['./test/support/global-setup.ts'],
          // Each test starts the gateway and its upstreams as real processes (seconds each on a busy machine).
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'playground',
          root: './examples/playground',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          // The server tests open SQLite ledgers and start the playground's server.
          testTimeout: 20_000,
        },
      },
      {
        resolve: {
          alias: [
            {
              find: /^(react|react-dom|@testing-library\/react)(\/.*)?$/,
              replacement: `${react18}/../../$1$2`,
            },
          ],
        },
        test: { name: 'react-18', ...reactTests },
      },
    ],
  },
});
