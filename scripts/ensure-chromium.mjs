#!/usr/bin/env node
// The end-to-end tests drive Debian's Chromium (Playwright cannot download its own browsers
// here). Installs it when it is missing; does nothing when it is there.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const CHROMIUM = '/usr/bin/chromium';

if (existsSync(CHROMIUM)) process.exit(0);

if (process.getuid?.() !== 0) {
  console.error(
    `${CHROMIUM} is missing. Install it with: sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium`,
  );
  process.exit(1);
}

const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium']]) {
  console.log(`apt-get ${args.join(' ')}`);
  const result = spawnSync('apt-get', args, { stdio: 'inherit', env });
  if (result.status !== 0) {
    console.error(
      `apt-get ${args.join(' ')} failed (exit ${result.status ?? result.signal}); Chromium is needed for the end-to-end tests.`,
    );
    process.exit(1);
  }
}
if (!existsSync(CHROMIUM)) {
  console.error(`apt-get installed chromium but ${CHROMIUM} is still missing.`);
  process.exit(1);
}
