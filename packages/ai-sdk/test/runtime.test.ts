import aiPackage from 'ai/package.json' with { type: 'json' };
import { expect, it } from 'vitest';

// The package's tests run twice: on AI SDK 6 under Node 20, and on AI SDK 7 under Node 22
// (vitest.ai-7.config.ts). This says which one ran, so a run that resolved the wrong SDK fails.
it('runs on the AI SDK major this run is for, on a Node that supports it', () => {
  const expected = process.env['TOOLGATE_EXPECT_AI_MAJOR'] ?? '6';
  expect(aiPackage.version.split('.')[0]).toBe(expected);
  if (Number(expected) >= 7) expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(22);
});
