import { realpathSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The package's tests again, on AI SDK 7 (which needs Node 22): `ai` and `ai/test` resolve to the
// AI SDK 7 that the @toolgate/ai-sdk-7-env directory dependency installs. The root's
// `test:ai-sdk-7` script runs this under Node 22 (`npx -y node@22`). The ledgers are PostgreSQL
// here: the SQLite driver is built for the Node 20 that runs everything else.
const env = realpathSync(fileURLToPath(new URL('./node_modules/@toolgate/ai-sdk-7-env/', import.meta.url)));
const ai = `${env}/../../ai`;
const postgres = new URL(
  process.env['TOOLGATE_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
);

/** Whether PostgreSQL answers on its port; without it the run is skipped, loudly, except under CI. */
function reachable(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(Number(postgres.port || 5432), postgres.hostname);
    socket.setTimeout(2000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.end(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

export default defineConfig(async () => {
  const skip = process.env['CI'] !== 'true' && !(await reachable());
  if (skip)
    console.warn(
      `\n!!! SKIPPING @toolgate/ai-sdk on AI SDK 7: no PostgreSQL at ${postgres.host}. Start it (or set TOOLGATE_TEST_POSTGRES_URL); with CI=true this fails instead.\n`,
    );
  return {
    resolve: {
      alias: [
        { find: /^ai$/, replacement: `${ai}/dist/index.js` },
        { find: /^ai\/test$/, replacement: `${ai}/dist/test/index.js` },
        { find: /^ai\/package\.json$/, replacement: `${ai}/package.json` },
      ],
    },
    test: {
      name: 'ai-sdk on AI SDK 7',
      root: fileURLToPath(new URL('.', import.meta.url)),
      include: skip ? [] : ['test/**/*.test.ts'],
      passWithNoTests: skip,
      environment: 'node',
      testTimeout: 20_000,
      env: { TOOLGATE_EXPECT_AI_MAJOR: '7', TOOLGATE_AI_SDK_LEDGER: 'postgres' },
    },
  };
});
