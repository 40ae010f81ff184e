import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Builds the page once; every spec then starts its own server on the build. */
export default function globalSetup(): void {
  const example = join(dirname(fileURLToPath(import.meta.url)), '..');
  execFileSync(join(example, 'node_modules', '.bin', 'vite'), ['build', '--logLevel', 'warn'], {
    cwd: example,
    stdio: 'inherit',
  });
}
