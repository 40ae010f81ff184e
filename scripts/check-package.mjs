#!/usr/bin/env node
// Checks the package as it would be published: packs it with pnpm (which applies publishConfig),
// then runs publint and Are The Types Wrong on the tarball.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const run = (cmd, args) => {
  const result = spawnSync(cmd, args, { stdio: 'inherit', shell: false });
  if (result.status !== 0) process.exit(result.status ?? 1);
};

const out = mkdtempSync(join(tmpdir(), 'toolgate-pack-'));
try {
  run('pnpm', ['pack', '--pack-destination', out]);
  const tarball = join(
    out,
    readdirSync(out).find((f) => f.endsWith('.tgz')),
  );
  run('publint', [tarball, '--strict']);
  run('attw', [tarball, '--profile', 'esm-only']);
} finally {
  rmSync(out, { recursive: true, force: true });
}
