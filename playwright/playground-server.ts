import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PLAYGROUND = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'playground');

/** A playground server process of a spec's own (the built page, in production mode), on a ledger file of its own. */
export interface PlaygroundProcess {
  readonly url: string;
  readonly ledger: string;
  /** The running process's id. */
  readonly pid: () => number;
  /** Ends the process with `signal` and waits until it is gone. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<void>;
  /** Starts the server again on the same port and ledger. */
  readonly start: () => Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** Starts `node server.mjs --production` with the end-to-end hooks on; `env` adds to its environment. */
export async function startPlayground(env: Record<string, string> = {}): Promise<PlaygroundProcess> {
  const port = await freePort();
  const ledger = join(mkdtempSync(join(tmpdir(), 'toolgate-e2e-')), 'playground.db');
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    const started = spawn(process.execPath, ['server.mjs', '--production'], {
      cwd: PLAYGROUND,
      env: {
        ...process.env,
        PORT: String(port),
        PLAYGROUND_LEDGER: ledger,
        PLAYGROUND_TEST_HOOKS: '1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const listen = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('toolgate playground:')) resolve();
      };
      started.stdout.on('data', listen);
      started.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      started.once('exit', (code, signal) =>
        reject(
          new Error(
            `the playground server ended (code ${String(code)}, signal ${String(signal)}) before it listened:\n${output}`,
          ),
        ),
      );
    });
  }

  async function stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const running = child;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill(signal);
    await gone;
  }

  await start();
  return {
    url: `http://127.0.0.1:${port}`,
    ledger,
    pid: () => child?.pid ?? -1,
    stop,
    start,
  };
}
