import { defineConfig } from 'tsdown';

export default defineConfig({
  // One entry per channel, so that an app importing one loads none of the others' dependencies.
  entry: {
    'webhook/index': 'src/webhook/index.ts',
    'slack/index': 'src/slack/index.ts',
    'email/index': 'src/email/index.ts',
  },
  format: 'esm',
  platform: 'node',
  fixedExtension: false,
  target: 'node20',
  sourcemap: true,
  dts: { sourcemap: true },
});
