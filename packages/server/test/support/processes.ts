import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const runner = fileURLToPath(new URL('./run-ts.mjs', import.meta.url));

/** A TypeScript module of this package running in a process of its own, printing JSON lines. */
export interface Child {
  /** Resolves with the first line printed that `match` accepts. */
  readonly line: (match: (message: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>;
  /** Resolves when the process is gone, with its exit code or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  readonly kill: (signal: NodeJS.Signals) => void;
}

/** Starts `test/support/processes/<name>.ts` with `args`. */
export function start(name: string, args: readonly string[]): Child {
  const module = fileURLToPath(new URL(`./processes/${name}.ts`, import.meta.url));
  const child = spawn(process.execPath, [runner, module, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const waiting = new Set<{ match: (message: Record<string, unknown>) => boolean; resolve: (message: Record<string, unknown>) => void }>();
  createInterface({ input: child.stdout }).on('line', (text) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    lines.push(message);
    for (const waiter of waiting) {
      if (!waiter.match(message)) continue;
      waiting.delete(waiter);
      waiter.resolve(message);
    }
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
  return {
    line: (match) => {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return Promise.race([
        new Promise<Record<string, unknown>>((resolve) => waiting.add({ match, resolve })),
        exited.then(({ code, signal, stderr: errors }) => {
          throw new Error(`${name} ended (code ${String(code)}, signal ${String(signal)}) before printing the line awaited:\n${errors}`);
        }),
      ]);
    },
    exited,
    kill: (signal) => child.kill(signal),
  };
}
