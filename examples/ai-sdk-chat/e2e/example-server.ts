import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The example's server process (the built page, scripted model), on a ledger file of its own. */
export interface ExampleServer {
  readonly url: string;
  readonly ledger: string;
  /** Each run of a tool so far, in order, as the tools logged it. */
  readonly effects: () => { tool: string; input: Record<string, unknown> }[];
  /** Ends the process with `signal` and waits until it is gone. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<void>;
  /** Starts the server again on the same port and ledger. */
  readonly start: () => Promise<void>;
}

/** Starts `node server.mjs --production` with PORT=0 the first time, then again on the port it took. */
export async function startExample(): Promise<ExampleServer> {
  const directory = mkdtempSync(join(tmpdir(), 'toolgate-ai-sdk-chat-'));
  const ledger = join(directory, 'ledger.db');
  const effectsFile = join(directory, 'effects.jsonl');
  let port = 0;
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    const started = spawn(process.execPath, ['server.mjs', '--production'], {
      cwd: EXAMPLE,
      env: {
        ...process.env,
        PORT: String(port),
        AI_SDK_CHAT_LEDGER: ledger,
        AI_SDK_CHAT_EFFECTS: effectsFile,
        OPENAI_API_KEY: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      started.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const listening = /toolgate ai-sdk-chat: http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
        if (listening?.[1] !== undefined) {
          port = Number(listening[1]);
          resolve();
        }
      });
      started.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      started.once('exit', (code, signal) =>
        reject(
          new Error(
            `the example server ended (code ${String(code)}, signal ${String(signal)}) before it listened:\n${output}`,
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
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    ledger,
    effects: () => {
      try {
        return readFileSync(effectsFile, 'utf8')
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as { tool: string; input: Record<string, unknown> });
      } catch {
        return [];
      }
    },
    stop,
    start,
  };
}
