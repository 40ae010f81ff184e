#!/usr/bin/env node
// Runs the pinned pnpm without needing it installed globally (corepack cannot
// verify registry signatures on every machine, so npx fetches the exact build).
import { spawnSync } from 'node:child_process';

const PNPM = 'pnpm@12.4.2';
const args = process.argv.slice(2);
const env = { ...process.env, npm_config_yes: 'true' };
const result = spawnSync('npx', ['-y', PNPM, ...args], { stdio: 'inherit', env });
if (result.error) {
  console.error(result.error.message);
  process.exit(1);
}
process.exit(result.status ?? 1);
