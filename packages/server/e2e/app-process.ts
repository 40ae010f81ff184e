import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** An app server started as a process of its own, over a SQLite file in a directory of its own. */
export interface AppProcess {
  readonly origin: string;
  /** Closes its stdin (it ends itself), waits for it, and removes its directory. */
  readonly stop: () => Promise<void>;
}

const runTs = fileURLToPath(new URL('../test/support/run-ts.mjs', import.meta.url));

/**
 * Starts `module` (a TypeScript app server printing `{ ready: true, origin }` once it listens, and
 * ending when its stdin closes) with `node run-ts.mjs`, from `cwd`, its ledger a new SQLite file.
 *
 * @example
 * const app = await startApp(packageRoot, 'test/support/processes/link-app.ts');
 */
export async function startApp(cwd: string, module: string): Promise<AppProcess> {
  const directory = mkdtempSync(join(tmpdir(), 'toolgate-e2e-app-'));
  const child: ChildProcess = spawn(process.execPath, [runTs, module, join(directory, 'ledger.db')], {
    cwd,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const origin = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the app server exited with ${code} before it was ready`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const message = JSON.parse(line) as { ready?: boolean; origin?: string };
      if (message.ready === true) resolve(message.origin as string);
    });
  });
  return {
    origin,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin?.end();
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
